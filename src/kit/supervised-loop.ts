import type { Logger } from '../log.js';
import { backoffDelay, faultBackoff, type BackoffPolicy } from './backoff.js';
import { createWakeUp } from './wake-up.js';

// The one loop every background worker runs on (cron firing, job reaping, task dispatch, delivery, lease renewal):
// round -> sleep -> round. A failed round never ends the loop: it backs off with jitter up to a cap and tries again,
// logging the change of state once (failing, then recovered) rather than every failure. Its state feeds /readyz.
// Every round has a deadline of its own (WORKER_ROUND_DEADLINE_MS): a round still running then waits on something
// that will not answer (a statement to a server that vanished, a promise nothing settles), so the loop abandons it
// (its signal aborted, so it claims nothing more should it ever return), reports itself `stalled` (readiness fails,
// naming it), says so once, and starts again after a back-off. stop() ends the loop at once (a round in progress
// sees `signal.aborted` and claims nothing more); it waits for that round at most until the deadline it is given.

export type LoopState = 'idle' | 'running' | 'backing-off' | 'stalled' | 'stopped';

export interface LoopStatus {
  name: string;
  state: LoopState;
  /** Failed or abandoned rounds in a row (0 when the last round succeeded). */
  failures: number;
  /** Rounds abandoned at their deadline since the process started. */
  stalls: number;
}

export interface SupervisedLoop {
  readonly name: string;
  start(): void;
  /**
   * Ends the loop: no new round starts; resolves when the current one has returned, was abandoned at its own deadline,
   * or `deadline` (epoch ms) came, whichever is first.
   */
  stop(deadline?: number): Promise<void>;
  /** New work may be there: cuts a normal sleep short (a back-off is not cut short by ordinary wake-ups). */
  nudge(): void;
  /** The database is back (the event bus reconnected): cuts any sleep short, back-off included. */
  poll(): void;
  status(): LoopStatus;
  /** Calls `listener` each time a round is abandoned at its deadline. */
  onStall(listener: () => void): void;
}

export interface LoopOptions {
  name: string;
  log: Logger;
  backoff: BackoffPolicy;
  /** Longest a round may take before it is abandoned and the loop reports itself stalled. */
  roundDeadlineMs: number;
  /**
   * One round; answers how long to sleep before the next (0 = at once). A throw is a failed round. `signal` aborts
   * when the loop stops or abandons the round: claim nothing more after it has.
   */
  round(signal: AbortSignal): Promise<number>;
}

/** What every loop of a process shares: its back-off after a fault and the deadline of a round. */
export interface LoopLimits {
  backoff: BackoffPolicy;
  roundDeadlineMs: number;
}

/** The limits configured for every loop: back-off up to BACKOFF_MAX_MS, rounds bounded by WORKER_ROUND_DEADLINE_MS. */
export function loopLimits(config: { BACKOFF_MAX_MS: number; WORKER_ROUND_DEADLINE_MS: number }): LoopLimits {
  return { backoff: faultBackoff(config), roundDeadlineMs: config.WORKER_ROUND_DEADLINE_MS };
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

/** `onStall`: a round of `loop` was abandoned at its deadline (what it waited on may be a connection that is dead). */
export function createLoopRegistry(options: { onStall?: (loop: string) => void } = {}): LoopRegistry {
  const loops = new Set<SupervisedLoop>();
  const sleepers = new Set<() => void>();
  return {
    add(loop) {
      loops.add(loop);
      loop.onStall(() => options.onStall?.(loop.name));
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

/** How a round ended: it answered (a sleep), it threw, or its deadline came first. */
type RoundEnd = { kind: 'done'; sleepMs: number } | { kind: 'failed'; error: unknown } | { kind: 'stalled' };

export function superviseLoop(options: LoopOptions): SupervisedLoop {
  const { name, log } = options;
  const stopping = new AbortController();
  const wakeUp = createWakeUp();
  let state: LoopState = 'idle';
  let failures = 0;
  let stalls = 0;
  /** The current run of failures began with, or met, a stall (said once per run). */
  let stallSaid = false;
  let failingSince = 0;
  let loop: Promise<void> | undefined;
  const stallListeners: (() => void)[] = [];

  /** Runs one round under its deadline; an abandoned round goes on alone, its end heard only at debug. */
  async function runRound(): Promise<RoundEnd> {
    const abandon = new AbortController();
    const onStop = () => abandon.abort();
    stopping.signal.addEventListener('abort', onStop, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const round = options.round(abandon.signal).then(
      (sleepMs): RoundEnd => ({ kind: 'done', sleepMs }),
      (error: unknown): RoundEnd => ({ kind: 'failed', error }),
    );
    const deadline = new Promise<RoundEnd>((resolve) => (timer = setTimeout(() => resolve({ kind: 'stalled' }), options.roundDeadlineMs)));
    try {
      const end = await Promise.race([round, deadline]);
      if (end.kind === 'stalled') {
        abandon.abort();
        void round.then((late) => log.debug({ loop: name, end: late.kind, err: late.kind === 'failed' ? late.error : undefined }, `${name}: an abandoned round ended`));
      }
      return end;
    } finally {
      clearTimeout(timer);
      stopping.signal.removeEventListener('abort', onStop);
    }
  }

  async function run(): Promise<void> {
    while (!stopping.signal.aborted) {
      wakeUp.reset();
      let sleepMs: number;
      const end = await runRound();
      if (end.kind === 'done') {
        if (failures > 0) log.info({ loop: name, failures, downMs: Date.now() - failingSince }, `${name} recovered`);
        failures = 0;
        stallSaid = false;
        state = 'running';
        sleepMs = end.sleepMs;
      } else {
        failures += 1;
        if (failures === 1) failingSince = Date.now();
        if (end.kind === 'stalled') {
          stalls += 1;
          state = 'stalled';
          for (const listener of stallListeners) listener();
          if (!stallSaid) {
            log.warn(
              { loop: name, roundDeadlineMs: options.roundDeadlineMs, failures },
              `${name} stalled: a round did not finish within ${options.roundDeadlineMs} ms (WORKER_ROUND_DEADLINE_MS); abandoned it and starting again with back-off until a round completes`,
            );
          } else {
            log.debug({ loop: name, failures }, `${name} still stalled`);
          }
          stallSaid = true;
        } else {
          if (failures === 1) log.warn({ err: end.error, loop: name }, `${name} failing; retrying with back-off until it recovers`);
          else log.debug({ err: end.error, loop: name, failures }, `${name} still failing`);
          // A stalled loop stays stalled (and not ready) until a round completes, whatever the rounds in between do.
          if (state !== 'stalled') state = 'backing-off';
        }
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
    async stop(deadline) {
      stopping.abort();
      wakeUp.wake();
      if (loop && deadline !== undefined) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([loop, new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
        clearTimeout(timer);
      } else {
        await loop;
      }
      state = 'stopped';
    },
    nudge() {
      if (state !== 'backing-off' && state !== 'stalled') wakeUp.wake();
    },
    poll() {
      wakeUp.wake();
    },
    status: () => ({ name, state, failures, stalls }),
    onStall(listener) {
      stallListeners.push(listener);
    },
  };
}
