import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_URL } from './helpers/databases.js';
import { NO_WORKERS, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { eventually, sleep } from './helpers/sink.js';
import { EVENTS_CHANNEL, eventPayload } from '../src/db/sql/notifyEvent.js';
import { LISTENER_APPLICATION_NAME } from '../src/db/listener.js';
import { sseSubscription, watchSubscriptions, wsSubscription, type Events } from './helpers/subscriptions.js';

// Connections cut under open subscriptions: the reads a change sets off are failed by terminating the gateway's
// connections while they run. Each is read again once the database answers; no subscription is ended with an error
// (graphql-ws and SSE clients do not retry one that ended), and every one gets the state and the changes after it.

const QUERY = 'subscription { queueChanged(name: "watched") { name rate } }';
const rates = (sub: Events) => sub.events.map((e) => (e as { data?: { queueChanged?: { rate?: number } } }).data?.queueChanged?.rate);
const errors = (sub: Events) => sub.events.filter((e) => 'error' in (e as object) || 'errors' in (e as object));

describe('subscriptions while connections are cut (PostgreSQL)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('postgres', { ...NO_WORKERS });
    expect((await rpc(t.url, 'createQueue', { name: 'watched', rate: 1 })).status).toBe(200);
  });
  afterAll(() => t?.close());

  it('a read that follows a change and meets a terminated connection is read again: graphql-ws and SSE subscriptions go on', async () => {
    const watch = watchSubscriptions(t.gateway);
    const subs = [...Array.from({ length: 3 }, () => wsSubscription(t.url, QUERY)), ...Array.from({ length: 3 }, () => sseSubscription(t.url, QUERY))];
    await watch.ready('queue', 'watched', subs.length);
    const name = new URL(t.db.url!).pathname.slice(1);
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    const locker = new pg.Client({ connectionString: t.db.url });
    await Promise.all([admin.connect(), locker.connect()]);
    try {
      // The change is made under a lock, so the reads it sets off wait on it, each on a pooled connection of the
      // gateway; those connections are then terminated (not the listener's), which fails every read in flight.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE "Queue" IN ACCESS EXCLUSIVE MODE');
      await locker.query(`UPDATE "Queue" SET rate = 42 WHERE name = 'watched'`);
      // NOTIFY reaches the listeners of its own database only.
      const notifier = new pg.Client({ connectionString: t.db.url });
      await notifier.connect();
      await notifier.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, eventPayload('queue', 'watched')]);
      await notifier.end();
      await eventually(async () => {
        const { rows } = await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND application_name <> $2`,
          [name, LISTENER_APPLICATION_NAME],
        );
        return rows[0]!.n > 0;
      }, 5000, 20);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> $2 AND pid <> $3', [
        name,
        LISTENER_APPLICATION_NAME,
        (locker as unknown as { processID: number }).processID,
      ]);
      await sleep(300);
      await locker.query('COMMIT');
      await eventually(async () => subs.every((s) => rates(s).includes(42)), 10_000);
      for (const sub of subs) expect(errors(sub)).toEqual([]);
      // And they go on: the next change reaches every one.
      expect((await rpc(t.url, 'changeQueueRate', { name: 'watched', rate: 43 })).status).toBe(200);
      await eventually(async () => subs.every((s) => rates(s).includes(43)), 10_000);
    } finally {
      await Promise.all([admin.end(), locker.end().catch(() => undefined)]);
      await Promise.all(subs.map((s) => s.close()));
    }
  });
});
