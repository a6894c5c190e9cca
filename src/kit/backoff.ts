// How long to wait before the n-th retry after a fault: exponential from `baseMs`, with jitter (graphile-worker's
// 0.5 + random/2 factor, so that many processes that failed together do not retry together), never above `capMs`.

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

/** Delay before retry number `failures` (1 = first retry). */
export function backoffDelay(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponential = policy.baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30);
  return Math.round(Math.min(policy.capMs, exponential) * (0.5 + random() / 2));
}

/** The back-off after a database fault: from 100 ms up to BACKOFF_MAX_MS. */
export function faultBackoff(config: { BACKOFF_MAX_MS: number }): BackoffPolicy {
  return { baseMs: 100, capMs: config.BACKOFF_MAX_MS };
}
