import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSignStatus, gql, rpc, startTestGateway, type TestGateway, NO_WORKERS } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { announced, changeUnannounced, watchSubscriptions } from './helpers/subscriptions.js';
import { taskEventKey } from '../src/db/sql/taskEvents.js';
import { makeFixtures, type Fixtures } from './signatures/fixtures.js';
import { LISTENER_APPLICATION_NAME } from '../src/db/listener.js';

// The LISTEN connection is killed by the server and, in the same transaction, rows change with no NOTIFY at all:
// only the resync that follows the reconnect can tell anyone. Subscriptions must emit the state that changed (and
// nothing when nothing did), and the trust store must drop the root it had cached.

describe('event bus resync after the LISTEN connection is lost (PostgreSQL)', () => {
  let t: TestGateway;
  let sql: pg.Client;
  let fixtures: Fixtures;

  beforeAll(async () => {
    fixtures = makeFixtures();
    t = await startTestGateway('postgres', { ...NO_WORKERS, CMS_WORKERS: '1' });
    sql = new pg.Client({ connectionString: t.db.url });
    await sql.connect();
  }, 60_000);
  afterAll(async () => {
    await sql?.end();
    await t?.close();
    fixtures?.cleanup();
  });

  const verify = () => checkSignStatus(t.url, fixtures.b64('untrusted.p7s'));

  it('subscriptions emit what changed during the gap (once, and nothing when nothing changed); the trust cache is dropped', async () => {
    await rpc(t.url, 'createQueue', { name: 'r', rate: 2 });
    await rpc(t.url, 'pauseQueue', { name: 'r' });
    // Announcements arrive in commit order: once the task's is heard, the queue's are too, before anyone subscribes.
    await announced(t.gateway, 'task', taskEventKey('r', 'waiting'), () => rpc(t.url, 'createTask', { queueName: 'r', name: 'waiting', target: { url: 'http://127.0.0.1:9/never' } }));
    const pem = readFileSync(join(fixtures.dir, 'untrusted-root.pem'), 'utf8');
    const added = await gql(t.url, 'mutation($pem: String!) { addTrustedRoot(profile: DEFAULT, pem: $pem) { fingerprint } }', { pem });
    expect(added.errors).toBeUndefined();
    expect(await verify()).toBe('VERIFICATION_SUCCESS'); // the set with the root is cached now

    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    const queueEvents: unknown[] = [];
    const taskEvents: unknown[] = [];
    const completed = new Set<unknown[]>();
    const sink = (into: unknown[]) => ({ next: (v: { data?: unknown }) => into.push(v.data), error: (e: unknown) => into.push({ error: e }), complete: () => completed.add(into) });
    const subscriptions = watchSubscriptions(t.gateway);
    client.subscribe({ query: 'subscription { queueChanged(name: "r") { rate paused } }' }, sink(queueEvents));
    client.subscribe({ query: 'subscription { taskStatusChanged(queueName: "r", name: "waiting") { status } }' }, sink(taskEvents));
    // Each has read the state it compares with after a resync.
    const bothReady = () => Promise.all([subscriptions.ready('queue', 'r'), subscriptions.ready('task', taskEventKey('r', 'waiting'))]);
    await bothReady();

    await changeUnannounced(
      sql,
      `UPDATE "Queue" SET rate = 9 WHERE name = 'r'`,
      `UPDATE "Task" SET status = 'CANCELLED' WHERE name = 'waiting'`,
      `DELETE FROM "TrustedRoot"`,
    );
    await eventually(async () => queueEvents.length > 0 && taskEvents.length > 0, 10_000);
    expect(queueEvents).toEqual([{ queueChanged: { rate: 9, paused: true } }]);
    expect(taskEvents).toEqual([{ taskStatusChanged: { status: 'CANCELLED' } }]);
    // CANCELLED is an end status: the task's subscription completes after it, even when a resync found it.
    await eventually(async () => completed.has(taskEvents), 5000);
    expect(completed.has(queueEvents)).toBe(false);
    expect(await verify()).not.toBe('VERIFICATION_SUCCESS');
    await eventually(async () => (await (await fetch(`${t.url}/readyz`)).json()).checks.listener === 'ok', 5000);

    // A second loss with no change: the resync re-reads and emits nothing.
    const killed = await changeUnannounced(sql);
    await eventually(async () => (await sql.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND pid <> $2`, [LISTENER_APPLICATION_NAME, killed])).rowCount === 1, 5000);
    // A new connection; once it LISTENs the resync is told (listener ok), and both subscriptions have handled it.
    await eventually(async () => (await (await fetch(`${t.url}/readyz`)).json()).checks.listener === 'ok', 5000, 20);
    await subscriptions.ready('queue', 'r');
    // And events flow again through the new connection.
    await rpc(t.url, 'changeQueueRate', { name: 'r', rate: 4 });
    await eventually(async () => queueEvents.length === 2, 5000);
    expect(queueEvents[1]).toEqual({ queueChanged: { rate: 4, paused: true } });
    expect(taskEvents).toHaveLength(1);
    await client.dispose();
  }, 60_000);
});

describe('trust cache age bound', () => {
  it('a cached set of roots is read again after TRUST_CACHE_MAX_AGE_MS even when no event or resync says so', async () => {
    const { vi } = await import('vitest');
    const { TRUST_CACHE_MAX_AGE_MS } = await import('../src/signatures/trust.js');
    const fixtures = makeFixtures();
    const t = await startTestGateway('postgres', { ...NO_WORKERS, CMS_WORKERS: '1' });
    const sql = new pg.Client({ connectionString: t.db.url });
    await sql.connect();
    try {
      const verify = () => checkSignStatus(t.url, fixtures.b64('untrusted.p7s'));
      const pem = readFileSync(join(fixtures.dir, 'untrusted-root.pem'), 'utf8');
      // The gateway hears its own NOTIFY of the new root some time after answering, and drops its cache then: the
      // set is cached for good only after that (a slow LISTEN connection would otherwise empty it after the DELETE).
      const heard = new Promise<void>((resolve) => {
        const off = t.gateway.services.bus.onTopic('trustedRoot', () => (off(), resolve()));
      });
      await gql(t.url, 'mutation($pem: String!) { addTrustedRoot(profile: DEFAULT, pem: $pem) { fingerprint } }', { pem });
      await heard;
      expect(await verify()).toBe('VERIFICATION_SUCCESS');
      await sql.query(`DELETE FROM "TrustedRoot"`); // no NOTIFY: as if it had been lost
      expect(await verify()).toBe('VERIFICATION_SUCCESS'); // still the cached set
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + TRUST_CACHE_MAX_AGE_MS + 1000 });
      try {
        expect(await verify()).not.toBe('VERIFICATION_SUCCESS');
      } finally {
        vi.useRealTimers();
      }
    } finally {
      await sql.end();
      await t.close();
      fixtures.cleanup();
    }
  }, 60_000);
});
