// Retries after a failure many shared (a receiver's outage) must not all come back at the same instant: every retry
// wait, of a notification or of a task, is its scheduled length times a random factor in [1 - RETRY_JITTER,
// 1 + RETRY_JITTER].

export const RETRY_JITTER = 0.2;

/** A random factor in [1 - RETRY_JITTER, 1 + RETRY_JITTER]. */
export function jitterFactor(random: () => number = Math.random): number {
  return 1 - RETRY_JITTER + 2 * RETRY_JITTER * random();
}
