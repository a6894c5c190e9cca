import type { Logger } from '../log.js';
import { backoffDelay, type BackoffPolicy } from './backoff.js';
import { createWakeUp } from './wake-up.js';

// The one loop every background worker runs on (cron firing, job reaping, task dispatch, delivery, lease renewal):
// round -> sleep -> round. A failed round never ends the loop: it backs off with jitter up to a cap and tries again,
// logging the change of state once (failing, then recovered) rather than every failure. Its state feeds /readyz.
// stop() ends the loop at once (a round in progress sees `signal.aborted` and claims nothing more).

export type LoopState = 'idle' | 'running' | 'backing-off' | 'stopped';

export interface LoopStatus {
  name: string;
  state: LoopState;
  /** Failed rounds in a row (0 when the last round succeeded). */
  failures: number;
}

export interface SupervisedLoop {
  readonly name: string;
  start(): void;
  /** Ends the loop: no new round starts; resolves when the current one has returned. */
  stop(): Promise<void>;
  /** New work may be there: cuts a normal sleep short (a back-off is not cut short by ordinary wake-ups). */
  nudge(): void;
  /** The database is back (the event bus reconnected): cuts any sleep short, back-off included. */
  poll(): void;
  status(): LoopStatus;
}

export interface LoopOptions {
  name: string;
  log: Logger;
  backoff: BackoffPolicy;
  /** One round; answers how long to sleep before the next (0 = at once). A throw is a failed round. */
  round(signal: AbortSignal): Promise<number>;
}

/** Every supervised loop of a process: what readiness reports and what a resync wakes. */
export interface LoopRegistry {
  add(loop: SupervisedLoop): SupervisedLoop;
  statuses(): LoopStatus[];
  /** The database is back: every loop polls, every pending retry (see sleep) tries again. */
  pollAll(): void;
  /** Waits up to `ms`; ends early on pollAll() or when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export function createLoopRegistry(): LoopRegistry {
  const loops = new Set<SupervisedLoop>();
  const sleepers = new Set<() => void>();
  return {
    add(loop) {
      loops.add(loop);
      return loop;
    },
    statuses: () => [...loops].map((l) => l.status()),
    pollAll() {
      for (const loop of loops) loop.poll();
      for (const wake of [...sleepers]) wake();
    },
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          sleepers.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        }
        sleepers.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    },
  };
}

export function superviseLoop(options: LoopOptions): SupervisedLoop {
  const { name, log } = options;
  const stopping = new AbortController();
  const wakeUp = createWakeUp();
  let state: LoopState = 'idle';
  let failures = 0;
  let failingSince = 0;
  let loop: Promise<void> | undefined;

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      wakeUp.reset();
      let sleepMs: number;
      try {
        sleepMs = await options.round(stopping.signal);
        if (failures > 0) log.info({ loop: name, failures, downMs: Date.now() - failingSince }, `${name} recovered`);
        failures = 0;
        state = 'running';
      } catch (error) {
        failures += 1;
        if (failures === 1) {
          failingSince = Date.now();
          log.warn({ err: error, loop: name }, `${name} failing; retrying with back-off until it recovers`);
        } else {
          log.debug({ err: error, loop: name, failures }, `${name} still failing`);
        }
        state = 'backing-off';
        wakeUp.reset(); // an ordinary wake-up during the failed round must not skip the back-off
        sleepMs = backoffDelay(failures, options.backoff);
      }
      if (sleepMs > 0 && !stopping.signal.aborted) await wakeUp.sleep(sleepMs);
    }
  }

  return {
    name,
    start() {
      if (loop || stopping.signal.aborted) return;
      state = 'running';
      loop = run().finally(() => (state = 'stopped'));
    },
    async stop() {
      stopping.abort();
      wakeUp.wake();
      await loop;
      state = 'stopped';
    },
    nudge() {
      if (state !== 'backing-off') wakeUp.wake();
    },
    poll() {
      wakeUp.wake();
    },
    status: () => ({ name, state, failures }),
  };
}
