import DataLoader from 'dataloader';
import rfdc from 'rfdc';

/**
 * Reads of one row by key that arrive in the same turn of the event loop share one statement (`WHERE key = ANY($1)`),
 * whichever requests they belong to. Under load a turn handles every socket that became readable meanwhile, so the
 * requests read together are answered by one round trip: one statement for PostgreSQL to plan, run and send, one
 * write and one read on the gateway's side, instead of one each. Alone (light load) a read waits only for the end of
 * its turn. Nothing is cached: every read goes to the database, after the moment it was asked, so a read sees every
 * write acknowledged before it was made. A failed shared statement is read again key by key, so one key's error is
 * never another's. Two reads of one key in one statement each get a row object of their own.
 */
export interface CoalescedReadOptions<D, K, R> {
  /** The rows of these keys (distinct), in any order; a key without a row has none. */
  rows(db: D, keys: K[]): Promise<R[]>;
  keyOf(row: R): K;
  /** Keys in one statement at most. */
  maxBatch?: number;
}

export type CoalescedRead<D, K, R> = (db: D, key: K) => Promise<R | null>;

const endOfTurn = (run: () => void) => setImmediate(run);

// A deep copy of a row of plain data (objects, arrays, dates, buffers, bigints). structuredClone goes through V8's
// serializer, several times the price of copying a row's few fields, and a hot key read by many requests in one turn
// is copied once per request.
const copyRow: <R>(row: R) => R = rfdc();

export function coalescedRead<D extends object, K, R>(options: CoalescedReadOptions<D, K, R>): CoalescedRead<D, K, R> {
  const loaders = new WeakMap<D, DataLoader<K, R | null>>();
  const readTogether = async (db: D, keys: readonly K[]): Promise<(R | null)[]> => {
    const rows = await options.rows(db, [...new Set(keys)]);
    const byKey = new Map(rows.map((row) => [options.keyOf(row), row]));
    const given = new Set<K>();
    return keys.map((key) => {
      const row = byKey.get(key);
      if (row === undefined) return null;
      if (!given.has(key)) {
        given.add(key);
        return row;
      }
      // Each read gets rows of its own: what a request derives from a row object (a view filtered by its caller's
      // scopes, say) must never reach another request that read the same key.
      return copyRow(row);
    });
  };
  const loaderOf = (db: D) => {
    let loader = loaders.get(db);
    if (!loader) {
      loader = new DataLoader<K, R | null>(
        async (keys) => {
          try {
            return await readTogether(db, keys);
          } catch (error) {
            if (keys.length === 1) throw error;
            return Promise.all(keys.map((key) => readTogether(db, [key]).then((rows) => rows[0]!, (failed: unknown) => asError(failed))));
          }
        },
        { cache: false, batchScheduleFn: endOfTurn, maxBatchSize: options.maxBatch ?? 100 },
      );
      loaders.set(db, loader);
    }
    return loader;
  };
  return (db, key) => loaderOf(db).load(key);
}

// DataLoader takes an Error instance in the answer array as that key's failure.
const asError = (failed: unknown): Error => (failed instanceof Error ? failed : new Error(String(failed)));

/**
 * The same read (the same statement with the same parameters, told by `keyOf`) asked by several requests in one turn
 * of the event loop runs once, for all of them: a list page with its count, which every caller of a list view asks
 * alike. As with coalescedRead nothing is kept: the statement runs at the end of the turn, after every request that
 * shares it asked, and a read asked later runs again. Each request past the first gets a copy of its own.
 */
export function sharedRead<D extends object, Q, R>(read: (db: D, query: Q) => Promise<R>, keyOf: (query: Q) => string): (db: D, query: Q) => Promise<R> {
  const waiting = new WeakMap<D, Map<string, { answer: Promise<R>; readers: number }>>();
  return (db, query) => {
    let byKey = waiting.get(db);
    if (!byKey) waiting.set(db, (byKey = new Map()));
    const key = keyOf(query);
    let shared = byKey.get(key);
    if (!shared) {
      const of = byKey;
      const answer = new Promise<R>((resolve, reject) =>
        endOfTurn(() => {
          of.delete(key);
          read(db, query).then(resolve, reject);
        }),
      );
      of.set(key, (shared = { answer, readers: 0 }));
    }
    return shared.readers++ === 0 ? shared.answer : shared.answer.then(copyRow);
  };
}
