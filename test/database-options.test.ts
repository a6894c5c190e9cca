import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, rpc, startTestGateway, type TestGateway, NO_WORKERS } from './helpers/gateway.js';
import { openDatabase } from '../src/db/client.js';
import { isDatabaseUnavailable } from '../src/db/errors.js';
import { LISTENER_APPLICATION_NAME } from '../src/db/listener.js';

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
