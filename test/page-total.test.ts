import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execute, parse, type ExecutionResult } from 'graphql';
import { openDatabase, type Database } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { loadConfig } from '../src/config.js';
import { buildSchema } from '../src/schema/schema.js';
import { compiledOperation } from '../src/pipeline/compiled.js';
import { readPage } from '../src/pagination.js';
import { DATABASES, freshDatabase, type FreshDatabase } from './helpers/databases.js';

// A page counts every matching row only when its query selects `totalCount`: without it, one row more than the page
// tells whether another follows. Counted by the statements each read sends, on both executors and both databases.

describe('readPage', () => {
  const calls: string[] = [];
  const rows = (all: number) => (skip: number, take: number) => {
    calls.push(`rows ${skip} ${take}`);
    return Promise.resolve(Array.from({ length: Math.max(0, Math.min(take, all - skip)) }, (_, i) => skip + i));
  };
  const count = (all: number) => () => {
    calls.push('count');
    return Promise.resolve(all);
  };

  it.each([
    // all, skip, take: items on the page and whether more follow
    [0, 0, 3, [], false],
    [3, 0, 3, [0, 1, 2], false],
    [4, 0, 3, [0, 1, 2], true],
    [7, 3, 3, [3, 4, 5], true],
    [6, 3, 3, [3, 4, 5], false],
    [5, 9, 3, [], false],
  ] as const)('%i rows, skip %i, take %i: the same page and hasMore with or without the total', async (all, skip, take, items, hasMore) => {
    calls.length = 0;
    const withTotal = await readPage({ skip, take, withTotal: true }, rows(all), count(all));
    expect(withTotal).toMatchObject({ items, hasMore, totalCount: all });
    expect(calls).toEqual([`rows ${skip} ${take}`, 'count']);
    calls.length = 0;
    const without = await readPage({ skip, take, withTotal: false }, rows(all), count(all));
    expect(without).toMatchObject({ items, hasMore, totalCount: null });
    expect(calls).toEqual([`rows ${skip} ${take + 1}`]);
    expect(await without.countTotal()).toBe(all);
  });

  it('uses `together` for page and total when given, and never for a page alone', async () => {
    calls.length = 0;
    const together = (skip: number, take: number) => {
      calls.push(`together ${skip} ${take}`);
      return Promise.resolve({ items: [skip], totalCount: 9 });
    };
    expect(await readPage({ skip: 2, take: 1, withTotal: true }, rows(9), count(9), together)).toMatchObject({ items: [2], totalCount: 9, hasMore: true });
    expect(calls).toEqual(['together 2 1']);
    calls.length = 0;
    await readPage({ skip: 2, take: 1, withTotal: false }, rows(9), count(9), together);
    expect(calls).toEqual(['rows 2 2']);
  });
});

describe.each(DATABASES)('connections count only when the total is selected (%s)', (kind) => {
  let fresh: FreshDatabase;
  let database: Database;
  let counted: PrismaClient<'query'>;
  let texts: string[] = [];
  const schema = buildSchema();
  const config = loadConfig({});

  beforeAll(async () => {
    fresh = await freshDatabase(kind);
    database = await openDatabase(fresh.url ? { databaseUrl: fresh.url, dataDir: 'unused' } : { dataDir: fresh.env.DATA_DIR! });
    if (fresh.url) await applyMigrations(database.adapterFactory);
    for (let i = 0; i < 5; i++) await database.prisma.queue.create({ data: { name: `q${i}`, labels: [] } });
    for (let i = 0; i < 4; i++) await database.prisma.task.create({ data: { queueName: 'q0', name: `t${i}`, status: 'READY', target: { kind: 'HTTP', url: 'http://127.0.0.1/' } } });
    for (let i = 0; i < 3; i++) await database.prisma.apiKey.create({ data: { name: `k${i}`, prefix: `00000000000${i}`, hash: `h${i}`, scopes: [] } });
    counted = new PrismaClient({ adapter: database.adapterFactory, log: [{ emit: 'event' as const, level: 'query' as const }] });
    counted.$on('query', (event) => void texts.push(event.query));
  });
  afterAll(async () => {
    await counted?.$disconnect();
    await database?.close();
    await fresh?.drop();
  });

  const run = async (source: string, how: 'graphql-js' | 'compiled') => {
    const document = parse(source);
    const contextValue = { db: counted, config, idpScopes: null, principal: { scopes: ['admin:all'] } } as never;
    texts = [];
    const result = (how === 'compiled' ? await compiledOperation(schema, document)!.run.query(undefined, contextValue, {}) : await execute({ schema, document, contextValue })) as ExecutionResult;
    expect(result.errors).toBeUndefined();
    return { data: JSON.parse(JSON.stringify(result.data)) as Record<string, { nodes: unknown[]; totalCount?: number; pageInfo?: { hasNextPage: boolean } }>, counts: texts.filter((t) => /count\(/i.test(t)).length, statements: texts.length };
  };

  const LISTS = [
    // field, its page of 2, how many rows match, its connection type
    ['queues', 'queues(first: 2)', 5, 'QueueConnection'],
    ['tasks', 'tasks(first: 2)', 4, 'TaskConnection'],
    ['apiKeys', 'apiKeys(first: 2)', 3, 'ApiKeyConnection'],
    ['jobs', 'jobs(first: 2)', 0, 'JobConnection'],
    ['jobInstances', 'jobInstances(first: 2)', 0, 'JobInstanceConnection'],
    ['verificationAudits', 'verificationAudits(first: 2)', 0, 'VerificationAuditConnection'],
  ] as const;

  describe.each(['graphql-js', 'compiled'] as const)('on %s', (how) => {
    it.each(LISTS)('%s: nodes and hasNextPage without a count; the same answer with the total, counted', async (field, call, rows, type) => {
      const alone = await run(`{ ${call} { nodes { __typename } pageInfo { hasNextPage } } }`, how);
      expect(alone.counts).toBe(0);
      expect(alone.statements).toBe(1);
      expect(alone.data[field]!.nodes).toHaveLength(Math.min(2, rows));
      expect(alone.data[field]!.pageInfo!.hasNextPage).toBe(rows > 2);

      const total = await run(`{ ${call} { totalCount nodes { __typename } pageInfo { hasNextPage } } }`, how);
      expect(total.counts).toBe(1);
      expect(total.data[field]).toEqual({ ...alone.data[field], totalCount: rows });

      // Through a named fragment and an inline one alike.
      const spread = await run(`query { ${call} { ...T nodes { __typename } } } fragment T on ${type} { totalCount }`, how);
      expect(spread.data[field]!.totalCount).toBe(rows);
      const inline = await run(`{ ${call} { ... on ${type} { totalCount } } }`, how);
      expect(inline.data[field]!.totalCount).toBe(rows);
    });

    it('a page at the end: hasNextPage false exactly when no row follows', async () => {
      for (const [first, after, next] of [[2, 2, false], [1, 2, true], [5, null, false], [4, null, true]] as const) {
        const cursor = after === null ? '' : `, after: "${Buffer.from(`o:${after}`).toString('base64url')}"`;
        const { data, counts } = await run(`{ queues(first: ${first}${cursor}) { nodes { name } pageInfo { hasNextPage } } }`, how);
        expect(counts).toBe(0);
        expect(data.queues!.pageInfo!.hasNextPage).toBe(next);
      }
    });
  });
});
