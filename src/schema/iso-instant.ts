// Date#toISOString costs ~1 us in V8 (a runtime call per date); a page of 50 queues serializes 100 instants. The same
// string built from the UTC fields costs a quarter of that. Years outside 1000-9999 (which toISOString writes with
// padding or a sign) are left to toISOString.

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const three = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** The same string as `date.toISOString()`. */
export function isoInstant(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 1000 && year <= 9999)) return date.toISOString();
  return `${year}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}T${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}.${three(date.getUTCMilliseconds())}Z`;
}
