import { DiskFullError, ServiceUnavailableError } from '../errors.js';
import { isDatabaseUnavailable, unavailableError } from './errors.js';
import { DEADLINE_PASSED_UNWRITTEN, deadlineLeft } from '../kit/request-deadline.js';

/**
 * Group commit of announcing writes. Every NOTIFY serializes its transaction's commit with every other notifying
 * commit of the server (PostgreSQL holds a global lock from pre-commit to the end of the commit, WAL flush included):
 * one announcing statement per request caps such writes at that lock's rate, far below plain INSERTs (pgbench on this
 * host, 16 clients: ~1,400/s with pg_notify in the INSERT's transaction, ~5,700/s without). Here at most `maxInFlight`
 * statements run; items arriving meanwhile are written together by the next one (one commit, one NOTIFY), each
 * answered when that statement committed. Alone (light load) an item goes at once. A shared statement that failed
 * with a definite error (a constraint, a bad value: nothing was written) is retried item by item, so one item's error
 * is never another's. One whose connection was lost (or that never got one) is not: it may have committed before its
 * reply was lost, and a retry would find its own rows and refuse them (a name taken); every item is answered
 * SERVICE_UNAVAILABLE, saying the outcome is unknown. An item still waiting for its statement when its request's
 * deadline passes (src/kit/request-deadline.ts) leaves the queue unwritten, and a queue already holding
 * `maxWaiting` items refuses more: while the database does not answer, memory in flight stays bounded.
 */
export interface GroupCommitOptions<I, O> {
  /** Writes the items in one statement (one transaction), answering one result per item, in order. */
  write(items: I[]): Promise<O[]>;
  /** Items in one statement at most. */
  maxBatch: number;
  /** Statements in flight at once (default 1). */
  maxInFlight?: number;
  /** Items with the same key never share a statement: the later one waits for the next (as if it came after). */
  keyOf?(item: I): string | null;
  /** Only items of the same shape share a statement (when the statement's text depends on it). */
  shapeOf?(item: I): string;
  /** Items waiting for a statement at most (default MAX_WAITING); more are refused with SERVICE_UNAVAILABLE. */
  maxWaiting?: number;
  /** Told each statement's item count as it is sent (a retry item by item counts as statements of one). */
  onStatement?(items: number): void;
}

/** Items a group commit holds waiting at most, unless told otherwise. */
export const MAX_WAITING = 5000;

/** What an item is told when the queue is full: nothing was written. */
export const QUEUE_FULL = 'The service is temporarily unavailable: too many writes are waiting for the database; nothing was stored. Retry shortly.';

interface Waiting<I, O> {
  item: I;
  done: (result: O) => void;
  failed: (error: unknown) => void;
  /** Its request's deadline timer, cleared when a statement takes it. */
  timer?: NodeJS.Timeout;
  taken?: boolean;
}

/** What a writer is told when its statement's connection failed: it may have been written (read it back before retrying). */
export const OUTCOME_UNKNOWN =
  'The service is temporarily unavailable: the database connection failed while this write was in flight, so it may or may not have been stored. Read it back before retrying.';

export class GroupCommit<I, O> {
  private readonly waiting: Waiting<I, O>[] = [];
  private inFlight = 0;
  constructor(private readonly options: GroupCommitOptions<I, O>) {}

  /** Resolves with the item's result once the statement that wrote it committed. */
  submit(item: I): Promise<O> {
    if (this.waiting.length >= (this.options.maxWaiting ?? MAX_WAITING)) return Promise.reject(new ServiceUnavailableError(QUEUE_FULL));
    return new Promise((done, failed) => {
      const waiting: Waiting<I, O> = { item, done, failed };
      this.waiting.push(waiting);
      this.pump();
      const left = deadlineLeft();
      if (left !== undefined && !waiting.taken) {
        waiting.timer = setTimeout(() => {
          const at = this.waiting.indexOf(waiting);
          if (at === -1) return;
          this.waiting.splice(at, 1);
          failed(new ServiceUnavailableError(DEADLINE_PASSED_UNWRITTEN));
        }, Math.max(0, left));
      }
    });
  }

  private pump(): void {
    while (this.inFlight < (this.options.maxInFlight ?? 1) && this.waiting.length) {
      const batch = this.take();
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  /** Up to maxBatch waiting items of the oldest one's shape, oldest first, no two with the same key. */
  private take(): Waiting<I, O>[] {
    const { maxBatch, keyOf, shapeOf } = this.options;
    const batch: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    const shape = shapeOf?.(this.waiting[0]!.item);
    for (let i = 0; i < this.waiting.length && batch.length < maxBatch; ) {
      const w = this.waiting[i]!;
      const key = keyOf?.(w.item) ?? null;
      if ((key !== null && keys.has(key)) || (shapeOf && shapeOf(w.item) !== shape)) {
        i++;
        continue;
      }
      if (key !== null) keys.add(key);
      clearTimeout(w.timer);
      w.taken = true;
      batch.push(w);
      this.waiting.splice(i, 1);
    }
    return batch;
  }

  private write(items: I[]): Promise<O[]> {
    this.options.onStatement?.(items.length);
    return this.options.write(items);
  }

  private async run(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((w) => w.item));
      batch.forEach((w, i) => w.done(results[i]!));
    } catch (error) {
      if (batch.length === 1 || isDatabaseUnavailable(error)) {
        for (const w of batch) w.failed(asAnswered(error));
        return;
      }
      for (const w of batch) {
        await this.write([w.item]).then((results) => w.done(results[0]!), (e: unknown) => w.failed(asAnswered(e)));
      }
    }
  }
}

/** A statement's error as its items are told it: a lost connection says the outcome is unknown. */
function asAnswered(error: unknown): unknown {
  // A full disk refused the statement: nothing was written, and the answer says so.
  const unavailable = unavailableError(error);
  if (unavailable instanceof DiskFullError) return unavailable;
  return unavailable ? new ServiceUnavailableError(OUTCOME_UNKNOWN) : error;
}

/** Where the group commits on one database client report their statements' item counts (src/runtime/metrics.ts). */
export type GroupCommitObserver = (writer: string, items: number) => void;
const observers = new WeakMap<object, GroupCommitObserver>();

/** Every group commit on `db`, made before or after, reports each statement to `observe` (one observer per client). */
export function observeGroupCommits(db: object, observe: GroupCommitObserver): void {
  observers.set(db, observe);
}

/** One GroupCommit per database client (a statement never mixes clients); `writer` names it to its observer. */
export function groupCommitPer<D extends object, I, O>(writer: string, options: (db: D) => GroupCommitOptions<I, O>): (db: D) => GroupCommit<I, O> {
  const commits = new WeakMap<D, GroupCommit<I, O>>();
  return (db) => {
    let commit = commits.get(db);
    if (!commit) commits.set(db, (commit = new GroupCommit({ ...options(db), onStatement: (items) => observers.get(db)?.(writer, items) })));
    return commit;
  };
}
