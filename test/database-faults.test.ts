import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startGateway, type Gateway } from '../src/app.js';
import { createApiKey } from '../src/access/api-keys.js';
import { loadConfig } from '../src/config.js';
import { ADMIN_URL } from './helpers/databases.js';
import { gql, NO_WORKERS, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { startPgCluster, type PgCluster } from './helpers/pg-cluster.js';
import { eventually } from './helpers/sink.js';

// Faults a PostgreSQL restart does not cover, on real servers: a frozen database (every process of a cluster of the
// test's own stopped: nothing fails, nothing answers), a read-only database (as after a failover to a replica), a
// table locked past the statement timeout, a pool whose every connection is busy. What clients get is 503 with
// Retry-After in each door's envelope, never -32603 or a 500; what /readyz says names the fault.

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
  describe('frozen database (every PostgreSQL process stopped with SIGSTOP)', () => {
    let cluster: PgCluster;
    let gateway: Gateway;
    let key: string;
    beforeAll(async () => {
      cluster = await startPgCluster();
      const url = await cluster.createDatabase('frozen');
      const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AUTH: 'on', OUTBOUND_ALLOW: '127.0.0.1', DATABASE_URL: url, REQUEST_DEADLINE_MS: '1500', ...NO_WORKERS });
      gateway = await startGateway(config, { log: pino({ level: 'silent' }) });
      ({ key } = await createApiKey(gateway.services.db, { name: 'writer', scopes: ['admin:all'] }));
    }, 60_000);
    afterAll(async () => {
      cluster?.thaw();
      await gateway?.close();
      cluster?.destroy();
    });

    it('reads and writes of every kind answer 503 with Retry-After by the request deadline, on both doors; nothing acknowledged is lost', async () => {
      const auth = { authorization: `Bearer ${key}` };
      expect((await rpc(gateway.url, 'createQueue', { name: 'before' }, {}, auth)).status).toBe(200);
      cluster.freeze();
      try {
        const started = Date.now();
        const task = { queueName: 'before', name: 't1', target: { url: 'http://127.0.0.1:9/' } };
        const answers = await Promise.all([
          rpc(gateway.url, 'getQueue', { name: 'before' }, {}, auth),
          rpc(gateway.url, 'createQueue', { name: 'while-frozen-1' }, {}, auth),
          rpc(gateway.url, 'createQueue', { name: 'while-frozen-2' }, {}, auth),
          rpc(gateway.url, 'createQueue', { name: 'while-frozen-3' }, {}, auth),
          rpc(gateway.url, 'createTask', task, {}, auth),
        ]);
        const graphql = await gql(gateway.url, 'mutation { createQueue(input: { name: "while-frozen-graphql" }) { name } }', {}, auth);
        const elapsed = Date.now() - started;
        for (const answer of answers) expectUnavailable(answer);
        expect(graphql.status).toBe(503);
        expect(graphql.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
        expect(elapsed).toBeLessThan(6000);
        const ready = await readiness(gateway.url);
        expect(ready.status).toBe(503);
        expect(ready.ms).toBeLessThan(3500);
      } finally {
        cluster.thaw();
      }
      await eventually(async () => (await rpc(gateway.url, 'createQueue', { name: 'after-thaw' }, {}, auth)).status === 200, 15_000, 200);
      expect((await rpc(gateway.url, 'getQueue', { name: 'before' }, {}, auth)).status).toBe(200);
      await eventually(async () => (await readiness(gateway.url)).status === 200, 10_000);
    });
  });

  describe('read-only database', () => {
    let t: TestGateway;
    let auth: Record<string, string>;
    beforeAll(async () => {
      // AUTH=on, as production runs: every keyed request used to write its rate-limit bucket, so reads failed too.
      t = await startTestGateway('postgres', { ...NO_WORKERS, AUTH: 'on' });
      const { key } = await createApiKey(t.gateway.services.db, { name: 'client', scopes: ['admin:all'] });
      auth = { authorization: `Bearer ${key}` };
      expect((await rpc(t.url, 'createQueue', { name: 'before' }, {}, auth)).status).toBe(200);
    });
    afterAll(() => t?.close());

    it('AUTH=on: writes answer 503 with Retry-After on both doors and change nothing; keyed reads answer; /readyz names it and stays ready', async () => {
      await setReadOnly(t, true);
      await eventually(async () => (await rpc(t.url, 'getQueue', { name: 'before' }, {}, auth)).status === 200, 10_000);

      const res = await fetch(`${t.url}/createQueue`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify({ jsonrpc: '2.0', method: 'createQueue', params: { name: 'during' }, id: 1 }) });
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expectUnavailable({ status: res.status, body: await res.json() });
      expectUnavailable(await rpc(t.url, 'changeQueueRate', { name: 'before', rate: 7 }, {}, auth));
      const graphql = await gql(t.url, 'mutation { createQueue(input: { name: "during-graphql" }) { name } }', {}, auth);
      expect(graphql.status).toBe(503);
      expect(graphql.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');

      // Reads keep answering, one after another (the rate limit goes on per process: tested in rate-limit.test.ts).
      for (let i = 0; i < 20; i++) expect((await rpc(t.url, 'getQueue', { name: 'before' }, {}, auth)).status).toBe(200);
      expect((await gql(t.url, '{ queue(name: "before") { name } }', {}, auth)).data).toEqual({ queue: { name: 'before' } });

      // The listener, whose connection was ended too, reconnects within a second or two.
      await eventually(async () => {
        const ready = await readiness(t.url);
        return ready.status === 200 && ready.body.checks.database === 'read-only';
      }, 10_000);

      await setReadOnly(t, false);
      await eventually(async () => (await rpc(t.url, 'createQueue', { name: 'after' }, {}, auth)).status === 200, 10_000);
      expect((await rpc(t.url, 'getQueue', { name: 'during' }, {}, auth)).body.error?.code).toBe(-32004);
      expect((await rpc(t.url, 'getQueue', { name: 'before' }, {}, auth)).body.result.rate).not.toBe(7);
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

    it('/readyz answers within its deadline and says the pool is saturated, not that the database is unreachable; a write whose transaction cannot start is 503', async () => {
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
        // A write whose transaction cannot start within Prisma's wait for a connection (P2028): nothing was written,
        // so the client is told to retry, on both doors.
        expectUnavailable(await rpc(t.url, 'changeQueueRate', { name: 'held', rate: 9 }));
        const graphql = await gql(t.url, 'mutation { changeQueueRate(name: "held", rate: 9) { name } }');
        expect(graphql.status).toBe(503);
        expect(graphql.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      } finally {
        await locker.query('ROLLBACK');
        await locker.end();
      }
      expect((await stuck).status).toBe(200);
      expect((await rpc(t.url, 'getQueue', { name: 'held' })).body.result.rate).not.toBe(9);
      await eventually(async () => (await readiness(t.url)).status === 200, 5000);
    });
  });
});
