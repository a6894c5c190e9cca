import type { AppServices } from '../services.js';
import type { Logger } from '../log.js';
import { measureClockOffset } from '../db/clock.js';
import type { Worker } from './types.js';
import { loopLimits, superviseLoop } from '../kit/supervised-loop.js';

// How far this process's clock is from the database's, measured every CLOCK_CHECK_MS on a supervised loop (the first
// measurement is made at start-up, before anything is served: src/gateway/services.ts). Decisions do not depend on it
// (they compare with the database's now()), but what the process stamps does, and an operator wants to know: off by
// more than a second, it says so once (and once more when it is back within), and /metrics always shows it.

/** Beyond this, a process's clock is reported as off. */
export const CLOCK_WARN_MS = 1000;
/** How often the offset is measured again. */
const CLOCK_CHECK_MS = 60_000;

/** Says what the offset means, once per change of verdict; answers whether it is off. */
export function reportClockOffset(log: Logger, offsetMs: number, uncertaintyMs: number, wasOff: boolean): boolean {
  const off = Math.abs(offsetMs) > CLOCK_WARN_MS;
  if (off && !wasOff) {
    log.warn(
      { clockOffsetMs: Math.round(offsetMs), uncertaintyMs: Math.round(uncertaintyMs) },
      `this process's clock is ${Math.abs(offsetMs / 1000).toFixed(1)} s ${offsetMs > 0 ? 'ahead of' : 'behind'} the database's: schedules, leases and backoffs follow the database's clock, but fix the host's time (NTP)`,
    );
  } else if (!off && wasOff) {
    log.info({ clockOffsetMs: Math.round(offsetMs) }, "this process's clock agrees with the database's again");
  }
  return off;
}

export function createClockCheck(services: AppServices, log: Logger, startedOff: boolean): Worker {
  let off = startedOff;
  const loop = services.loops.add(
    superviseLoop({
      name: 'clock',
      log,
      ...loopLimits(services.config),
      async round() {
        const { offsetMs, uncertaintyMs } = await measureClockOffset(services.db);
        off = reportClockOffset(log, offsetMs, uncertaintyMs, off);
        return CLOCK_CHECK_MS;
      },
    }),
  );
  return {
    name: 'clock',
    start: () => loop.start(),
    stop: (deadline) => loop.stop(deadline),
    nudge() {},
  };
}
