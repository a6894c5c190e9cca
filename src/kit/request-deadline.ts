import { AsyncLocalStorage } from 'node:async_hooks';
import { ServiceUnavailableError } from '../errors.js';

// Every operation has a deadline (REQUEST_DEADLINE_MS). A database that is frozen, a table locked, a pool with no free
// connection: whatever the operation waits on, it answers SERVICE_UNAVAILABLE (503, Retry-After) when the deadline
// passes, instead of when the wait ends. Work that waits in the gateway's own queues (a group commit's next statement)
// reads the deadline of the request it serves and leaves the queue when it passes, having written nothing.

const current = new AsyncLocalStorage<number>();

/** What a request that outlived its deadline is told: its write may or may not have been made. */
export const DEADLINE_PASSED =
  'The service is temporarily unavailable: the database did not answer within the request deadline. A write may or may not have been stored: read it back before retrying.';

/** Thrown for work that left a queue at its deadline before it began: nothing of it was written. */
export const DEADLINE_PASSED_UNWRITTEN = 'The service is temporarily unavailable: the database did not take this write within the request deadline; nothing was stored. Retry shortly.';

/**
 * Runs `work` with a deadline `ms` from now (0: none). Resolves with its result, or rejects with a
 * ServiceUnavailableError when the deadline passes first (the work itself goes on until what it waits for answers).
 */
export function withDeadline<T>(ms: number, work: () => Promise<T>): Promise<T> {
  if (ms <= 0) return work();
  const at = Date.now() + ms;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new ServiceUnavailableError(DEADLINE_PASSED)), ms);
    current.run(at, work).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** Milliseconds left before the current request's deadline; undefined outside a request with one. */
export function deadlineLeft(): number | undefined {
  const at = current.getStore();
  return at === undefined ? undefined : at - Date.now();
}
