import type { Logger } from '../log.js';
import { backoffDelay, type BackoffPolicy } from './backoff.js';
import type { LoopRegistry } from './supervised-loop.js';

// A settling write (a task's result, a delivery's outcome, a job instance's end) records work that was already
// done: losing it would make another process do that work again once the lease runs out. So it is retried with
// back-off until it lands (a resync retries at once); only stop() gives up, when the shutdown deadline comes,
// and then the lease decides (at-least-once, as documented).

export interface SettleRetry {
  backoff: BackoffPolicy;
  loops: LoopRegistry;
  log: Logger;
  /** Aborted when the process stops waiting (shutdown deadline). */
  signal: AbortSignal;
}

/** A worker's settle retries, and the one way to make the ones still pending give up: at the shutdown deadline. */
export function createSettleRetry(options: Omit<SettleRetry, 'signal'>): SettleRetry & { giveUpAt(deadline: number): () => void } {
  const giveUp = new AbortController();
  return {
    ...options,
    signal: giveUp.signal,
    giveUpAt(deadline) {
      const timer = setTimeout(() => giveUp.abort(), Math.max(0, deadline - Date.now()));
      return () => clearTimeout(timer);
    },
  };
}

export async function settleUntilLanded<T>(what: string, write: () => Promise<T>, retry: SettleRetry): Promise<T> {
  for (let failures = 0; ; ) {
    try {
      const result = await write();
      if (failures > 0) retry.log.info({ what, failures }, 'settling write landed after retries');
      return result;
    } catch (error) {
      failures += 1;
      if (retry.signal.aborted) throw error;
      if (failures === 1) retry.log.warn({ err: error, what }, 'settling write failed; retrying until it lands');
      await retry.loops.sleep(backoffDelay(failures, retry.backoff), retry.signal);
    }
  }
}
