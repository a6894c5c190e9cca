import type { Logger } from '../log.js';
import { superviseLoop, type LoopLimits, type LoopRegistry, type SupervisedLoop } from '../kit/supervised-loop.js';

// While a worker holds leased rows (tasks running, notifications being sent or waiting to settle), it extends their
// leases every third of the lease, so a slow attempt is never taken over by another process; only a dead process
// (or an outage longer than the lease) lets a lease expire. A failed or stalled renewal retries sooner, never later,
// than the normal interval.

export function startLeaseRenewal(options: {
  leaseSeconds: number;
  /** The ids this worker holds now. */
  held: () => string[];
  /** Extends their leases; answers the ids whose leases it extended. */
  renew: (ids: string[]) => Promise<string[]>;
  logger: Logger;
  /** What the rows are, for the log and the loop's name ("task", "delivery"). */
  what: string;
  loops: LoopRegistry;
  limits: LoopLimits;
}): SupervisedLoop {
  const intervalMs = Math.max(200, (options.leaseSeconds * 1000) / 3);
  // A row settled while its renewal was under way is not renewed, yet nothing was lost: it leaves `held` once its
  // settle is through. So a row counts as lost only when two renewals in a row did not keep it and it is still held.
  let missedOnce = new Set<string>();
  const reported = new Set<string>();
  return options.loops.add(
    superviseLoop({
      name: `${options.what}-lease-renewal`,
      log: options.logger,
      backoff: { baseMs: options.limits.backoff.baseMs, capMs: Math.min(options.limits.backoff.capMs, intervalMs) },
      // A renewal that waits past its interval lets leases run out: the next one starts on another connection.
      roundDeadlineMs: Math.min(options.limits.roundDeadlineMs, intervalMs),
      async round() {
        const ids = options.held();
        const kept = new Set(ids.length ? await options.renew(ids) : []);
        const stillHeld = new Set(options.held());
        const missed = new Set(ids.filter((id) => !kept.has(id) && stillHeld.has(id)));
        const lost = [...missed].filter((id) => missedOnce.has(id) && !reported.has(id));
        missedOnce = missed;
        for (const id of reported) if (!stillHeld.has(id)) reported.delete(id);
        if (lost.length) {
          for (const id of lost) reported.add(id);
          options.logger.warn({ held: ids.length, lost: lost.length, ids: lost.slice(0, 10) }, `some ${options.what} leases were lost; their work may be done again elsewhere`);
        }
        return intervalMs;
      },
    }),
  );
}
