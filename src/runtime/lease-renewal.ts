import type { Logger } from '../log.js';
import type { BackoffPolicy } from './backoff.js';
import { superviseLoop, type LoopRegistry, type SupervisedLoop } from './supervised-loop.js';

// While a worker holds leased rows (tasks running, notifications being sent or waiting to settle), it extends their
// leases every third of the lease, so a slow attempt is never taken over by another process; only a dead process
// (or an outage longer than the lease) lets a lease expire. A failed renewal retries sooner, never later, than the
// normal interval.

export function startLeaseRenewal(options: {
  leaseSeconds: number;
  /** The ids this worker holds now. */
  held: () => string[];
  /** Extends their leases; answers how many are still held. */
  renew: (ids: string[]) => Promise<number>;
  logger: Logger;
  /** What the rows are, for the log and the loop's name ("task", "delivery"). */
  what: string;
  loops: LoopRegistry;
  backoff: BackoffPolicy;
}): SupervisedLoop {
  const intervalMs = Math.max(200, (options.leaseSeconds * 1000) / 3);
  return options.loops.add(
    superviseLoop({
      name: `${options.what}-lease-renewal`,
      log: options.logger,
      backoff: { baseMs: options.backoff.baseMs, capMs: Math.min(options.backoff.capMs, intervalMs) },
      async round() {
        const ids = options.held();
        const kept = await options.renew(ids);
        if (kept < ids.length) options.logger.warn({ held: ids.length, kept }, `some ${options.what} leases were lost; their work may be done again elsewhere`);
        return intervalMs;
      },
    }),
  );
}
