import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_URL } from './helpers/databases.js';
import { gql, NO_WORKERS, rpc, startProxiedGateway, startTestGateway, type ProxiedGateway, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';

// Faults a PostgreSQL restart does not cover, on a real server: a frozen database (every process stopped: nothing
// fails, nothing answers), a read-only database (as after a failover to a replica), a table locked past the statement
// timeout, a pool whose every connection is busy. What clients get is
// 503 with Retry-After in each door's envelope, never -32603 or a 500; what /readyz says names the fault.

const dbName = (t: TestGateway) => new URL(t.db.url!).pathname.slice(1);

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Sets the database read-only (or back) for new sessions, and ends the gateway's sessions so that it reconnects. */
async function setReadOnly(t: TestGateway, on: boolean): Promise<void> {
  await admin(async (c) => {
    await c.query(`ALTER DATABASE "${dbName(t)}" SET default_transaction_read_only = ${on ? 'on' : 'off'}`);
    await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [dbName(t)]);
  });
}

const readiness = async (url: string) => {
  const started = Date.now();
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as { failing: string[]; checks: { database: string } }, ms: Date.now() - started };
};

function expectUnavailable(answer: { status: number; body: { error?: { code: number; message: string } } }) {
  expect(answer.status).toBe(503);
  expect(answer.body.error?.code).toBe(-32050);
}

describe('database faults (PostgreSQL)', () => {
  describe('frozen database', () => {
    let t: ProxiedGateway;
    beforeAll(async () => {
      t = await startProxiedGateway({ REQUEST_DEADLINE_MS: '1500', ...NO_WORKERS });
      expect((await rpc(t.url, 'createQueue', { name: 'frozen' })).status).toBe(200);
    }, 60_000);
    afterAll(() => t?.close());

    it('reads and writes of every kind answer 503 with Retry-After by the request deadline, on both doors; all works once it thaws', async () => {
      t.proxy.freeze();
      try {
        const started = Date.now();
        const task = { queueName: 'frozen', name: 't1', target: { url: 'http://127.0.0.1:9/' } };
        const answers = await Promise.all([
          rpc(t.url, 'getQueue', { name: 'frozen' }),
          rpc(t.url, 'createQueue', { name: 'while-frozen-1' }),
          rpc(t.url, 'createQueue', { name: 'while-frozen-2' }),
          rpc(t.url, 'createQueue', { name: 'while-frozen-3' }),
          rpc(t.url, 'createTask', task),
        ]);
        const graphql = await gql(t.url, 'mutation { createQueue(input: { name: "while-frozen-graphql" }) { name } }');
        const elapsed = Date.now() - started;
        for (const answer of answers) expectUnavailable(answer);
        expect(graphql.status).toBe(503);
        expect(graphql.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
        expect(elapsed).toBeLessThan(6000);
        const ready = await readiness(t.url);
        expect(ready.status).toBe(503);
        expect(ready.ms).toBeLessThan(3500);
      } finally {
        t.proxy.thaw();
      }
      await eventually(async () => (await rpc(t.url, 'createQueue', { name: 'after-thaw' })).status === 200, 15_000, 200);
      expect((await rpc(t.url, 'getQueue', { name: 'frozen' })).status).toBe(200);
      await eventually(async () => (await readiness(t.url)).status === 200, 10_000);
    });
  });

  describe('read-only database', () => {
    let t: TestGateway;
    beforeAll(async () => {
      t = await startTestGateway('postgres', { ...NO_WORKERS });
      expect((await rpc(t.url, 'createQueue', { name: 'before' })).status).toBe(200);
    });
    afterAll(() => t?.close());

    it('writes answer 503 with Retry-After on both doors and change nothing; reads answer; /readyz names it and stays ready', async () => {
      await setReadOnly(t, true);
      await eventually(async () => (await rpc(t.url, 'getQueue', { name: 'before' })).status === 200, 10_000);

      const res = await fetch(`${t.url}/createQueue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'createQueue', params: { name: 'during' }, id: 1 }) });
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expectUnavailable({ status: res.status, body: await res.json() });
      expectUnavailable(await rpc(t.url, 'changeQueueRate', { name: 'before', rate: 7 }));
      const graphql = await gql(t.url, 'mutation { createQueue(input: { name: "during-graphql" }) { name } }');
      expect(graphql.status).toBe(503);
      expect(graphql.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');

      // The listener, whose connection was ended too, reconnects within a second or two.
      await eventually(async () => {
        const ready = await readiness(t.url);
        return ready.status === 200 && ready.body.checks.database === 'read-only';
      }, 10_000);

      await setReadOnly(t, false);
      await eventually(async () => (await rpc(t.url, 'createQueue', { name: 'after' })).status === 200, 10_000);
      expect((await rpc(t.url, 'getQueue', { name: 'during' })).body.error?.code).toBe(-32004);
      expect((await rpc(t.url, 'getQueue', { name: 'before' })).body.result.rate).not.toBe(7);
      await eventually(async () => (await readiness(t.url)).body.checks.database === 'ok', 5000);
    });
  });

  describe('a table locked past the statement timeout', () => {
    let t: TestGateway;
    beforeAll(async () => {
      t = await startTestGateway('postgres', { ...NO_WORKERS, DATABASE_STATEMENT_TIMEOUT_MS: '1000' });
      expect((await rpc(t.url, 'createQueue', { name: 'locked' })).status).toBe(200);
    });
    afterAll(() => t?.close());

    it('reads and writes of the table answer 503 within a few seconds, not when the lock goes', async () => {
      const locker = new pg.Client({ connectionString: t.db.url });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE "Queue" IN ACCESS EXCLUSIVE MODE');
        const started = Date.now();
        const [read, write] = await Promise.all([rpc(t.url, 'getQueue', { name: 'locked' }), rpc(t.url, 'createQueue', { name: 'while-locked' })]);
        expectUnavailable(read);
        expectUnavailable(write);
        expect(Date.now() - started).toBeLessThan(5000);
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
      expect((await rpc(t.url, 'getQueue', { name: 'locked' })).status).toBe(200);
    });
  });

  describe('every pooled connection busy', () => {
    let t: TestGateway;
    beforeAll(async () => {
      t = await startTestGateway('postgres', { ...NO_WORKERS, DATABASE_POOL_MAX: '1' });
      expect((await rpc(t.url, 'createQueue', { name: 'held' })).status).toBe(200);
    });
    afterAll(() => t?.close());

    it('/readyz answers within its deadline and says the pool is saturated, not that the database is unreachable', async () => {
      const locker = new pg.Client({ connectionString: t.db.url });
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "Queue" IN ACCESS EXCLUSIVE MODE');
      // Holds the one pooled connection, waiting on the lock; the next statements queue for the connection.
      const stuck = rpc(t.url, 'getQueue', { name: 'held' });
      try {
        await new Promise((r) => setTimeout(r, 300));
        const ready = await readiness(t.url);
        expect(ready.status).toBe(503);
        expect(ready.body.failing).toContain('database');
        expect(ready.body.checks.database).toBe('pool-saturated');
        expect(ready.ms).toBeLessThan(3500);
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
      expect((await stuck).status).toBe(200);
      await eventually(async () => (await readiness(t.url)).status === 200, 5000);
    });
  });
});
