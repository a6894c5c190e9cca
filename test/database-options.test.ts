import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, rpc, startTestGateway, type TestGateway, NO_WORKERS } from './helpers/gateway.js';
import { openDatabase } from '../src/db/client.js';
import { Prisma } from '../src/generated/prisma/client.js';
import { statementsOf } from '../src/db/statements.js';
import { isDatabaseUnavailable } from '../src/db/errors.js';
import { LISTENER_APPLICATION_NAME } from '../src/db/listener.js';
import { freshDatabase } from './helpers/databases.js';
import { until } from './helpers/ports.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

// DATABASE_POOL_MAX, DATABASE_STATEMENT_TIMEOUT_MS and DATABASE_CONNECT_TIMEOUT_MS reach the PostgreSQL driver, and
// what they cut short is an outage (503), not a bug.

describe('database options (PostgreSQL)', () => {
  let t: TestGateway;
  let sql: pg.Client;
  beforeAll(async () => {
    t = await startTestGateway('postgres', { DATABASE_POOL_MAX: '2', DATABASE_STATEMENT_TIMEOUT_MS: '300', ...NO_WORKERS });
    sql = new pg.Client({ connectionString: t.db.url });
    await sql.connect();
  }, 60_000);
  afterAll(async () => {
    await sql?.end();
    await t?.close();
  });

  it('holds at most DATABASE_POOL_MAX pooled connections under 30 concurrent requests', async () => {
    await rpc(t.url, 'createQueue', { name: 'pooled' });
    let peak = 0;
    let load = true;
    const watcher = (async () => {
      while (load) {
        const { rows } = await sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> $1`,
          [LISTENER_APPLICATION_NAME],
        );
        peak = Math.max(peak, rows[0]!.n);
        await new Promise((r) => setTimeout(r, 5)); // the watcher's sampling interval, not a wait for anything
      }
    })();
    const answers = await Promise.all(Array.from({ length: 30 }, () => gql(t.url, '{ queue(name: "pooled") { name } }')));
    load = false;
    await watcher;
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(2);
  });

  it('a statement held past DATABASE_STATEMENT_TIMEOUT_MS answers 503 SERVICE_UNAVAILABLE and changes nothing', async () => {
    await rpc(t.url, 'createQueue', { name: 'locked', rate: 1 });
    await sql.query('BEGIN');
    await sql.query(`SELECT * FROM "Queue" WHERE name = 'locked' FOR UPDATE`);
    try {
      const started = Date.now();
      const answer = await gql(t.url, 'mutation { changeQueueRate(name: "locked", rate: 7) { rate } }');
      expect(Date.now() - started).toBeLessThan(3000);
      expect(answer.status).toBe(503);
      expect(answer.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      const legacy = await rpc(t.url, 'changeQueueRate', { name: 'locked', rate: 8 });
      expect(legacy.status).toBe(503);
      expect(legacy.body.error.code).toBe(-32050);
    } finally {
      await sql.query('ROLLBACK');
    }
    expect((await rpc(t.url, 'getQueue', { name: 'locked' })).body.result.rate).toBe(1);
  });
});

describe('DATABASE_CONNECT_TIMEOUT_MS', () => {
  it('an unreachable server fails fast and is recognised as an outage', async () => {
    // TEST-NET-1 (RFC 5737): never answers; without a route it is refused at once, which is an outage too.
    const db = await openDatabase({ databaseUrl: 'postgresql://postgres@192.0.2.1:5432/none', dataDir: 'unused', connectTimeoutMs: 300 });
    const started = Date.now();
    const error = await db.prisma.$queryRaw`SELECT 1`.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(2500);
    expect(isDatabaseUnavailable(error)).toBe(true);
    await db.prisma.$disconnect();
  });
});

describe('DATABASE_QUERY_TIMEOUT_MS', () => {
  it('a statement the server never answers fails as an outage at the deadline, in a transaction too; its connection and the idle ones are closed, the next statement runs on a new one', async () => {
    const fresh = await freshDatabase('postgres');
    const direct = new URL(fresh.url);
    const proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
    const relayed = new URL(fresh.url);
    relayed.port = String(proxy.port);
    const db = await openDatabase({ databaseUrl: relayed.toString(), dataDir: 'unused', poolMax: 3, queryTimeoutMs: 800 });
    const holds: { release(): void }[] = [];
    // The relay holds what the gateway sends from the statement on: a server that does not answer, and no
    // statement_timeout can help.
    const silence = () => holds.push(proxy.hold((sent) => sent.includes('pg_sleep')));
    const failure = async (run: () => Promise<unknown>) => {
      const started = Date.now();
      const error = await run().then(
        () => undefined,
        (e: unknown) => e,
      );
      return { error, ms: Date.now() - started };
    };
    try {
      await Promise.all([db.prisma.$queryRaw`SELECT 1`, db.prisma.$queryRaw`SELECT 2`, db.prisma.$queryRaw`SELECT 3`]);
      expect(db.poolStats!().total).toBe(3);

      silence();
      const plain = await failure(() => db.prisma.$queryRaw`SELECT pg_sleep(0) AS held`);
      expect(isDatabaseUnavailable(plain.error)).toBe(true);
      expect(plain.ms).toBeGreaterThanOrEqual(750);
      expect(plain.ms).toBeLessThan(3000);
      // Their sockets are destroyed at the deadline; the pool lets them go as each one's close comes in.
      await expect.poll(() => db.poolStats!().total).toBe(0);
      expect(await db.prisma.$queryRaw`SELECT 4 AS four`).toEqual([{ four: 4 }]);

      // In a transaction: the ROLLBACK that follows meets the closed connection at once instead of a second deadline,
      // and the connection is not lent out again.
      silence();
      const inTransaction = await failure(() =>
        db.prisma.$transaction(async (tx) => {
          await tx.$queryRaw`SELECT 5`;
          await tx.$queryRaw`SELECT pg_sleep(0) AS held`;
        }),
      );
      expect(isDatabaseUnavailable(inTransaction.error)).toBe(true);
      expect(inTransaction.ms).toBeLessThan(3000);
      expect(await db.prisma.$transaction(async (tx) => tx.$queryRaw`SELECT 6 AS six`)).toEqual([{ six: 6 }]);

      // The gateway's own statements, on the same pool, alike.
      silence();
      const own = await failure(() => statementsOf(db.prisma).rows(Prisma.sql`SELECT pg_sleep(0) AS held`));
      expect(isDatabaseUnavailable(own.error)).toBe(true);
      expect(own.ms).toBeLessThan(3000);
      expect(await statementsOf(db.prisma).rows(Prisma.sql`SELECT 7 AS seven`)).toEqual([{ seven: 7 }]);
    } finally {
      for (const hold of holds) hold.release();
      await db.close();
      await proxy.close();
      await fresh.drop();
    }
  });
});

describe('DATABASE_PREPARED_STATEMENTS', () => {
  const prepared = (db: Awaited<ReturnType<typeof openDatabase>>) =>
    db.prisma.$queryRaw<{ name: string; statement: string }[]>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`;

  it('prepares the first N statement texts by name on each connection, again on a new connection after a fault, and no more', async () => {
    const fresh = await freshDatabase('postgres');
    const db = await openDatabase({ databaseUrl: fresh.url, dataDir: 'unused', poolMax: 1, preparedStatements: 2 });
    const admin = new pg.Client({ connectionString: fresh.url });
    try {
      await admin.connect();
      for (const _ of [1, 2]) {
        expect(await db.prisma.$queryRaw`SELECT 1 AS one`).toEqual([{ one: 1 }]);
        expect(await db.prisma.$queryRaw`SELECT 2 AS two`).toEqual([{ two: 2 }]);
      }
      expect(await db.prisma.$queryRaw`SELECT 3 AS three`).toEqual([{ three: 3 }]);
      // The third text and the listing itself stay unnamed.
      expect(await prepared(db)).toEqual([
        { name: 'gw1', statement: 'SELECT 1 AS one' },
        { name: 'gw2', statement: 'SELECT 2 AS two' },
      ]);

      // The pooled connection is cut (a restart, a pooler's recycle): its successor prepares again when the text comes.
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`);
      await until('a query after the cut', async () => (await db.prisma.$queryRaw<{ one: number }[]>`SELECT 1 AS one`)[0], 10_000);
      expect(await prepared(db)).toEqual([{ name: 'gw1', statement: 'SELECT 1 AS one' }]);
    } finally {
      await admin.end();
      await db.close();
      await fresh.drop();
    }
  });

  it('the gateway\'s own statements are prepared by name too, each text once, and read their values each call', async () => {
    const fresh = await freshDatabase('postgres');
    const db = await openDatabase({ databaseUrl: fresh.url, dataDir: 'unused', poolMax: 1, preparedStatements: 1 });
    try {
      const own = statementsOf(db.prisma);
      expect(await own.rows(Prisma.sql`SELECT ${1}::int AS n`)).toEqual([{ n: 1 }]);
      expect(await own.rows(Prisma.sql`SELECT ${2}::int AS n`)).toEqual([{ n: 2 }]);
      // Past the limit a text runs unnamed, with its values all the same.
      expect(await own.rows(Prisma.sql`SELECT ${3}::int + 1 AS n`)).toEqual([{ n: 4 }]);
      expect(await own.rows(Prisma.sql`SELECT ${5}::int AS n`)).toEqual([{ n: 5 }]);
      expect(await prepared(db)).toEqual([{ name: 'gw1', statement: 'SELECT $1::int AS n' }]);
    } finally {
      await db.close();
      await fresh.drop();
    }
  });

  it('0 prepares nothing by name (for a pooler that cannot carry named statements)', async () => {
    const fresh = await freshDatabase('postgres');
    const db = await openDatabase({ databaseUrl: fresh.url, dataDir: 'unused', poolMax: 1, preparedStatements: 0 });
    try {
      await db.prisma.$queryRaw`SELECT 1 AS one`;
      await db.prisma.$queryRaw`SELECT 1 AS one`;
      expect(await prepared(db)).toEqual([]);
    } finally {
      await db.close();
      await fresh.drop();
    }
  });
});
