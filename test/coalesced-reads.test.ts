import { describe, expect, it } from 'vitest';
import { coalescedRead, sharedRead } from '../src/db/coalesced-reads.js';

// The rules of coalesced reads, with a reader that records its statements (the SQL of each user is tested against
// Prisma's own reads on both databases in statements.test.ts).

interface Row {
  key: string;
  value: { n: number };
}

function recorder(options: { maxBatch?: number; failWhen?: (keys: string[]) => boolean } = {}) {
  const statements: string[][] = [];
  const db = {};
  const read = coalescedRead<object, string, Row>({
    rows: async (_db, keys) => {
      statements.push(keys);
      if (options.failWhen?.(keys)) throw new Error(`refused ${keys.join(',')}`);
      return keys.filter((key) => !key.startsWith('missing')).map((key) => ({ key, value: { n: key.length } }));
    },
    keyOf: (row) => row.key,
    ...(options.maxBatch !== undefined && { maxBatch: options.maxBatch }),
  });
  return { read: (key: string) => read(db, key), readFrom: read, statements };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('coalesced reads', () => {
  it('reads asked in one turn of the event loop share one statement, each answered with its own row', async () => {
    const { read, statements } = recorder();
    const rows = await Promise.all([read('a'), read('bb'), read('missing'), read('ccc')]);
    expect(statements).toEqual([['a', 'bb', 'missing', 'ccc']]);
    expect(rows).toEqual([{ key: 'a', value: { n: 1 } }, { key: 'bb', value: { n: 2 } }, null, { key: 'ccc', value: { n: 3 } }]);
  });

  it('reads of later turns go in later statements: nothing is kept between statements', async () => {
    const { read, statements } = recorder();
    const first = read('a');
    await nextTurn();
    const second = read('a');
    await Promise.all([first, second]);
    expect(statements).toEqual([['a'], ['a']]);
    expect(await read('a')).not.toBe(await first);
  });

  it('one key asked twice is read once, and each read gets a row object of its own', async () => {
    const { read, statements } = recorder();
    const [one, two] = await Promise.all([read('a'), read('a')]);
    expect(statements).toEqual([['a']]);
    expect(one).toEqual(two);
    expect(one).not.toBe(two);
    expect(one!.value).not.toBe(two!.value);
  });

  it('the copy a second read gets is deep and keeps every value\'s type: dates, buffers, bigints, arrays, nested rows', async () => {
    const row = () => ({
      oid: 'p', at: new Date('2026-01-02T03:04:05.678Z'), bytes: Buffer.from([1, 2, 3]), big: 9_007_199_254_740_993n, none: null,
      labels: ['a', 'b'], memberships: [{ organization: { oid: 'o', since: new Date(0) }, tags: [] as string[] }],
    });
    const read = coalescedRead<object, string, ReturnType<typeof row>>({ rows: async () => [row()], keyOf: (r) => r.oid });
    const db = {};
    const [one, two] = await Promise.all([read(db, 'p'), read(db, 'p')]);
    expect(two).toEqual(row());
    expect(two!.at).toBeInstanceOf(Date);
    expect(Buffer.isBuffer(two!.bytes)).toBe(true);
    two!.labels.push('c');
    two!.memberships[0]!.organization.since.setTime(1);
    two!.memberships[0]!.tags.push('x');
    two!.bytes[0] = 9;
    expect(one).toEqual(row());
  });

  it('a shared statement that fails is read again key by key: only the failing key fails', async () => {
    const { read, statements } = recorder({ failWhen: (keys) => keys.includes('bad') });
    const answers = await Promise.allSettled([read('a'), read('bad'), read('c')]);
    expect(statements).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
    expect(answers.map((a) => a.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((answers[1] as PromiseRejectedResult).reason).toEqual(new Error('refused bad'));
  });

  it('a read alone that fails fails with the statement\'s own error', async () => {
    const { read, statements } = recorder({ failWhen: () => true });
    await expect(read('a')).rejects.toThrow('refused a');
    expect(statements).toEqual([['a']]);
  });

  it('at most maxBatch keys go in one statement', async () => {
    const { read, statements } = recorder({ maxBatch: 2 });
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map(read));
    expect(statements).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('reads of different databases never share a statement', async () => {
    const { readFrom, statements } = recorder();
    const [one, other] = [{}, {}];
    await Promise.all([readFrom(one, 'a'), readFrom(other, 'b'), readFrom(one, 'c')]);
    expect(statements).toEqual([['a', 'c'], ['b']]);
  });

  it('the same read asked in one turn runs once; a later turn runs it again; each reader gets its own answer', async () => {
    const runs: string[] = [];
    const db = {};
    const page = sharedRead(async (_db: object, query: { prefix: string }) => {
      runs.push(query.prefix);
      return { items: [{ name: `${query.prefix}1` }], totalCount: 1 };
    }, (query) => query.prefix);
    const [a, b, c] = await Promise.all([page(db, { prefix: 'q' }), page(db, { prefix: 'q' }), page(db, { prefix: 'r' })]);
    expect(runs).toEqual(['q', 'r']);
    expect(a).toEqual(b);
    expect(a).not.toBe(b);
    expect(a.items[0]).not.toBe(b.items[0]);
    expect(c.items[0]!.name).toBe('r1');
    await page(db, { prefix: 'q' });
    expect(runs).toEqual(['q', 'r', 'q']);
  });

  it('a shared read that fails fails for each of its readers, and the next turn reads again', async () => {
    let fail = true;
    const db = {};
    const read = sharedRead(async () => {
      if (fail) throw new Error('outage');
      return 7;
    }, () => 'k');
    const answers = await Promise.allSettled([read(db, 0), read(db, 0)]);
    expect(answers.map((a) => a.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await read(db, 0)).toBe(7);
  });
});
