// Loaded with `node --import`: this process's wall clock reads TEST_CLOCK_SHIFT_MS ahead of the machine's (negative:
// behind), as on a host whose time is off. Only Date moves; timers and performance.now() keep real time, as they do
// on such a host.
const shift = Number(process.env.TEST_CLOCK_SHIFT_MS ?? 0);
const RealDate = globalThis.Date;
const shiftedNow = () => RealDate.now() + shift;
globalThis.Date = new Proxy(RealDate, {
  construct: (target, args, newTarget) => Reflect.construct(target, args.length ? args : [shiftedNow()], newTarget),
  apply: () => new RealDate(shiftedNow()).toString(),
  get: (target, property, receiver) => (property === 'now' ? shiftedNow : Reflect.get(target, property, receiver)),
});
