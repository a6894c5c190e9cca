import type { Logger } from '../log.js';

// While a worker holds leased rows (tasks running, notifications being sent), it extends their leases every third
// of the lease, so a slow attempt is never taken over by another process; only a dead process lets a lease expire.

export interface LeaseRenewal {
  stop(): void;
}

export function startLeaseRenewal(options: {
  leaseSeconds: number;
  /** The ids this worker holds now. */
  held: () => string[];
  /** Extends their leases; answers how many are still held. */
  renew: (ids: string[]) => Promise<number>;
  logger: Logger;
  /** What the rows are, for the log ("task", "delivery"). */
  what: string;
}): LeaseRenewal {
  const timer = setInterval(() => {
    const ids = options.held();
    options
      .renew(ids)
      .then((kept) => {
        if (kept < ids.length) options.logger.warn({ held: ids.length, kept }, `some ${options.what} leases were lost; their work may be done again elsewhere`);
      })
      .catch((error: unknown) => options.logger.error({ err: error }, `renewing ${options.what} leases failed`));
  }, Math.max(200, (options.leaseSeconds * 1000) / 3));
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
