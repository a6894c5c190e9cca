/**
 * Group commit of announcing writes. Every NOTIFY serializes its transaction's commit with every other notifying
 * commit of the server (PostgreSQL holds a global lock from pre-commit to the end of the commit, WAL flush included):
 * one announcing statement per request caps such writes at that lock's rate, far below plain INSERTs (pgbench on this
 * host, 16 clients: ~1,400/s with pg_notify in the INSERT's transaction, ~5,700/s without). Here at most `maxInFlight`
 * statements run; items arriving meanwhile are written together by the next one (one commit, one NOTIFY), each
 * answered when that statement committed. Alone (light load) an item goes at once. A failed shared statement is
 * retried item by item, so one item's error is never another's.
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
}

interface Waiting<I, O> {
  item: I;
  done: (result: O) => void;
  failed: (error: unknown) => void;
}

export class GroupCommit<I, O> {
  private readonly waiting: Waiting<I, O>[] = [];
  private inFlight = 0;
  constructor(private readonly options: GroupCommitOptions<I, O>) {}

  /** Resolves with the item's result once the statement that wrote it committed. */
  submit(item: I): Promise<O> {
    return new Promise((done, failed) => {
      this.waiting.push({ item, done, failed });
      this.pump();
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
      batch.push(w);
      this.waiting.splice(i, 1);
    }
    return batch;
  }

  private async run(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const results = await this.options.write(batch.map((w) => w.item));
      batch.forEach((w, i) => w.done(results[i]!));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.failed(error);
        return;
      }
      for (const w of batch) {
        await this.options.write([w.item]).then((results) => w.done(results[0]!), w.failed);
      }
    }
  }
}

/** One GroupCommit per database client (a statement never mixes clients). */
export function groupCommitPer<D extends object, I, O>(options: (db: D) => GroupCommitOptions<I, O>): (db: D) => GroupCommit<I, O> {
  const commits = new WeakMap<D, GroupCommit<I, O>>();
  return (db) => {
    let commit = commits.get(db);
    if (!commit) commits.set(db, (commit = new GroupCommit(options(db))));
    return commit;
  };
}
