import { describe, expect, it } from 'vitest';
import { GroupCommit, groupCommitPer, observeGroupCommits, OUTCOME_UNKNOWN } from '../src/db/group-commit.js';
import type { ServiceUnavailableError } from '../src/errors.js';

// The batching rules of group commit, with a writer that records its statements (the SQL of each user is tested on
// real databases: queues.test.ts, notifications-accept.test.ts).

interface Item {
  id: number;
  key?: string;
  shape?: string;
  bad?: boolean;
}

function recorder(options: { maxBatch?: number; maxInFlight?: number } = {}) {
  const statements: number[][] = [];
  let release: (() => void) | undefined;
  const commit = new GroupCommit<Item, string>({
    maxBatch: options.maxBatch ?? 10,
    maxInFlight: options.maxInFlight ?? 1,
    keyOf: (item) => item.key ?? null,
    shapeOf: (item) => item.shape ?? '',
    async write(items) {
      statements.push(items.map((item) => item.id));
      // The first statement stays in flight until released, so the items after it queue up.
      if (statements.length === 1) await new Promise<void>((resolve) => (release = resolve));
      if (items.some((item) => item.bad)) throw new Error(items.length === 1 ? `item ${items[0]!.id} is bad` : 'a shared statement failed');
      return items.map((item) => `wrote ${item.id}`);
    },
  });
  return { commit, statements, release: () => release?.() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('group commit', () => {
  it('an item alone goes at once; items arriving meanwhile share the next statement, each answered with its own result', async () => {
    const { commit, statements, release } = recorder();
    const first = commit.submit({ id: 1 });
    await settle();
    expect(statements).toEqual([[1]]);
    const later = [2, 3, 4].map((id) => commit.submit({ id }));
    await settle();
    expect(statements).toEqual([[1]]);
    release();
    expect(await Promise.all([first, ...later])).toEqual(['wrote 1', 'wrote 2', 'wrote 3', 'wrote 4']);
    expect(statements).toEqual([[1], [2, 3, 4]]);
  });

  it('at most maxBatch items per statement, oldest first', async () => {
    const { commit, statements, release } = recorder({ maxBatch: 2 });
    const all = [1, 2, 3, 4, 5, 6].map((id) => commit.submit({ id }));
    await settle();
    release();
    await Promise.all(all);
    expect(statements).toEqual([[1], [2, 3], [4, 5], [6]]);
  });

  it('two items with one key never share a statement; only items of one shape do', async () => {
    const { commit, statements, release } = recorder();
    const all = [
      { id: 1 },
      { id: 2, key: 'a' },
      { id: 3, key: 'a' },
      { id: 4, key: 'b', shape: 'x' },
      { id: 5, key: 'b' },
      { id: 6, key: 'a' },
    ].map((item) => commit.submit(item));
    await settle();
    release();
    await Promise.all(all);
    expect(statements).toEqual([[1], [2, 5], [3], [4], [6]]);
  });

  it('a failed shared statement is retried item by item: only the bad item fails', async () => {
    const { commit, statements, release } = recorder();
    const first = commit.submit({ id: 1 });
    const later = [{ id: 2 }, { id: 3, bad: true }, { id: 4 }].map((item) => commit.submit(item).catch((error: Error) => error.message));
    await settle();
    release();
    await first;
    expect(await Promise.all(later)).toEqual(['wrote 2', 'item 3 is bad', 'wrote 4']);
    expect(statements).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });

  it('a shared statement whose connection was lost is not retried: its outcome is unknown, every item is SERVICE_UNAVAILABLE', async () => {
    const statements: number[][] = [];
    let release: (() => void) | undefined;
    const commit = new GroupCommit<Item, string>({
      maxBatch: 10,
      async write(items) {
        statements.push(items.map((item) => item.id));
        if (statements.length === 1) await new Promise<void>((resolve) => (release = resolve));
        if (items.length > 1) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
        return items.map((item) => `wrote ${item.id}`);
      },
    });
    const first = commit.submit({ id: 1 });
    const later = [2, 3].map((id) => commit.submit({ id }).catch((error: ServiceUnavailableError) => [error.code, error.message]));
    await settle();
    release!();
    expect(await first).toBe('wrote 1');
    expect(await Promise.all(later)).toEqual([
      ['SERVICE_UNAVAILABLE', OUTCOME_UNKNOWN],
      ['SERVICE_UNAVAILABLE', OUTCOME_UNKNOWN],
    ]);
    expect(statements).toEqual([[1], [2, 3]]);
  });

  it('maxInFlight statements run at once', async () => {
    const { commit, statements, release } = recorder({ maxInFlight: 2 });
    const all = [1, 2, 3].map((id) => commit.submit({ id }));
    // Both statements begin at once (a writer starts synchronously); the third item waits for one of them.
    expect(statements).toEqual([[1], [2]]);
    release();
    await Promise.all(all);
    expect(statements).toEqual([[1], [2], [3]]);
  });

  it("reports each statement's item count, a retry item by item as statements of one, to its client's observer", async () => {
    const written: number[][] = [];
    let release: (() => void) | undefined;
    const commitOf = groupCommitPer('test_writer', (_db: object) => ({
      maxBatch: 10,
      async write(items: Item[]) {
        written.push(items.map((item) => item.id));
        if (written.length === 1) await new Promise<void>((resolve) => (release = resolve));
        if (items.length > 1 && items.some((item) => item.bad)) throw new Error('a shared statement failed');
        return items.map((item) => `wrote ${item.id}`);
      },
    }));
    const observed: [string, number][] = [];
    const watched = {};
    const unwatched = {};
    observeGroupCommits(watched, (writer, items) => observed.push([writer, items]));
    const commit = commitOf(watched);
    const first = commit.submit({ id: 1 });
    await settle();
    const later = [{ id: 2 }, { id: 3, bad: true }, { id: 4 }].map((item) => commit.submit(item));
    await settle();
    release!();
    await Promise.all([first, ...later]);
    expect(written).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
    expect(observed).toEqual([['test_writer', 1], ['test_writer', 3], ['test_writer', 1], ['test_writer', 1], ['test_writer', 1]]);
    // A client nobody observes: its statements are written and reported nowhere.
    expect(await commitOf(unwatched).submit({ id: 5 })).toBe('wrote 5');
    expect(observed).toHaveLength(5);
  });
});
