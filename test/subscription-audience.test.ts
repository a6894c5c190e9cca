import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { NO_WORKERS, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { announced, changeUnannounced, sseSubscription, watchSubscriptions, wsSubscription, type Events } from './helpers/subscriptions.js';
import { ONE_CONNECTION, tableScans } from './helpers/table-scans.js';
import { STATE_WINDOW_MS } from '../src/events/live.js';
import { taskEventKey } from '../src/db/sql/taskEvents.js';
import type { EventTopic } from '../src/events/bus.js';

// A key watched by many costs the database what it costs watched by one (src/events/live.ts): the statements the
// gateway runs for the same changes are counted by PostgreSQL with 1 subscriber and with 200 (half over graphql-ws,
// half over server-sent events), and must be the same; every subscriber ends on the final state.

/** `count` subscriptions of `query`: one over graphql-ws, or half over graphql-ws and half over SSE. */
function subscribe(url: string, query: string, count: number): Events[] {
  return Array.from({ length: count }, (_, i) => (i % 2 === 0 ? wsSubscription(url, query) : sseSubscription(url, query)));
}

type Data = Record<string, Record<string, unknown> | null>;
const data = (sub: Events) => sub.events.map((e) => (e as { data?: Data }).data);
const errors = (sub: Events) => sub.events.filter((e) => 'error' in (e as object) || 'errors' in (e as object));

interface Case {
  topic: EventTopic;
  field: string;
  selection: string;
  /** The i-th change (from 1) to `queue`, and whether a value shows it. */
  change: (url: string, queue: string, i: number) => Promise<unknown>;
  shows: (value: Record<string, unknown>, i: number) => boolean;
}

const CASES: Case[] = [
  {
    topic: 'queueTasks',
    field: 'tasksSummaryChanged',
    selection: '(queueName: $q) { total ready }',
    change: (url, queue, i) => rpc(url, 'createTask', { queueName: queue, name: `t${i}`, target: { url: 'http://127.0.0.1:9/never' } }),
    shows: (value, i) => value.total === i && value.ready === i,
  },
  {
    topic: 'queue',
    field: 'queueChanged',
    selection: '(name: $q) { name rate }',
    change: (url, queue, i) => rpc(url, 'changeQueueRate', { name: queue, rate: i + 1 }),
    shows: (value, i) => value.rate === i + 1,
  },
];

const CHANGES = 3;

describe.each(DATABASES)('subscriptions that scale with their audience on %s', (kind) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(kind, { ...NO_WORKERS, ...ONE_CONNECTION });
  }, 60_000);
  afterAll(() => t?.close());

  /** The statements the gateway ran for CHANGES changes watched by `count` subscribers, who all saw each change. */
  const statementsFor = async (c: Case, queue: string, count: number) => {
    expect((await announced(t.gateway, 'queue', queue, () => rpc(t.url, 'createQueue', { name: queue }))).status).toBe(200);
    const watch = watchSubscriptions(t.gateway);
    const subs = subscribe(t.url, `subscription { ${c.field}${c.selection.replace('$q', JSON.stringify(queue))} }`, count);
    try {
      await watch.ready(c.topic, queue, count);
      const before = await tableScans(t.gateway);
      for (let i = 1; i <= CHANGES; i++) {
        await c.change(t.url, queue, i);
        // Each change is seen by everyone before the next: none is coalesced with another, with 1 or with many.
        await eventually(async () => subs.every((s) => data(s).some((d) => d?.[c.field] && c.shows(d[c.field]!, i))), 15_000, 10);
      }
      const statements = (await tableScans(t.gateway)) - before;
      for (const sub of subs) {
        expect(errors(sub)).toEqual([]);
        expect(c.shows(data(sub).at(-1)![c.field]!, CHANGES)).toBe(true);
      }
      return statements;
    } finally {
      await Promise.all(subs.map((s) => s.close()));
    }
  };

  for (const c of CASES) {
    it(`${c.field}: the statements per change are the same with 1 and 200 subscribers, and every one ends on the final state`, async () => {
      const one = await statementsFor(c, `${c.field}-one`, 1);
      const many = await statementsFor(c, `${c.field}-many`, 200);
      expect(one).toBeGreaterThan(0);
      expect(many).toBe(one);
    }, 60_000);
  }

  it('taskStatusChanged: every transition reaches every subscriber in order, and the task they select is read once per change', async () => {
    const statementsFor = async (queue: string, count: number) => {
      expect((await announced(t.gateway, 'queue', queue, () => rpc(t.url, 'createQueue', { name: queue }))).status).toBe(200);
      const watch = watchSubscriptions(t.gateway);
      const subs = subscribe(t.url, `subscription { taskStatusChanged(queueName: "${queue}", name: "held") { status task { attempts } } }`, count);
      try {
        await watch.ready('task', taskEventKey(queue, 'held'), count);
        const before = await tableScans(t.gateway);
        // Created BLOCKED (scheduled later) and cancelled at once: two transitions closer than a window, both sent.
        await rpc(t.url, 'createTask', { queueName: queue, name: 'held', scheduleTime: new Date(Date.now() + 3_600_000).toISOString(), target: { url: 'http://127.0.0.1:9/never' } });
        expect((await rpc(t.url, 'cancelTask', { queueName: queue, name: 'held' })).status).toBe(200);
        await eventually(async () => subs.every((s) => data(s).length === 2), 15_000, 10);
        const statements = (await tableScans(t.gateway)) - before;
        for (const sub of subs) {
          expect(errors(sub)).toEqual([]);
          expect(data(sub)).toEqual([
            { taskStatusChanged: { status: 'BLOCKED', task: { attempts: 0 } } },
            { taskStatusChanged: { status: 'CANCELLED', task: { attempts: 0 } } },
          ]);
        }
        return statements;
      } finally {
        await Promise.all(subs.map((s) => s.close()));
      }
    };
    const one = await statementsFor('task-one', 1);
    const many = await statementsFor('task-many', 200);
    expect(many).toBe(one);
  }, 60_000);

  it(`a burst of changes reaches the subscribers as at most one state per ${STATE_WINDOW_MS} ms, the last one always`, async () => {
    const queue = 'burst';
    const BURST = 30;
    expect((await rpc(t.url, 'createQueue', { name: queue })).status).toBe(200);
    const watch = watchSubscriptions(t.gateway);
    const subs = subscribe(t.url, `subscription { tasksSummaryChanged(queueName: "${queue}") { total } }`, 20);
    try {
      await watch.ready('queueTasks', queue, subs.length);
      const began = Date.now();
      await Promise.all(Array.from({ length: BURST }, (_, i) => rpc(t.url, 'createTask', { queueName: queue, name: `b${i}`, target: { url: 'http://127.0.0.1:9/never' } })));
      await eventually(async () => subs.every((s) => data(s).at(-1)?.tasksSummaryChanged?.total === BURST), 15_000, 10);
      const windows = Math.floor((Date.now() - began) / STATE_WINDOW_MS) + 1;
      for (const sub of subs) {
        expect(errors(sub)).toEqual([]);
        expect(data(sub).length).toBeLessThanOrEqual(windows);
        expect(data(sub).length).toBeLessThan(BURST);
      }
    } finally {
      await Promise.all(subs.map((s) => s.close()));
    }
  }, 60_000);
});

describe('a resync with many subscribers (PostgreSQL)', () => {
  let t: TestGateway;
  let sql: pg.Client;
  beforeAll(async () => {
    t = await startTestGateway('postgres', { ...NO_WORKERS, ...ONE_CONNECTION });
    sql = new pg.Client({ connectionString: t.db.url });
    await sql.connect();
  }, 60_000);
  afterAll(async () => {
    await sql?.end();
    await t?.close();
  });

  /** Cancels the queue's tasks with no NOTIFY, and loses the LISTEN connection: only its resync tells anyone. */
  const cancelUnannounced = async (queue: string) => {
    await changeUnannounced(sql, { text: `UPDATE "Task" SET status = 'CANCELLED' WHERE "queueName" = $1`, values: [queue] });
    // This connection reports its own counts now: its UPDATE is counted in every run alike.
    await sql.query('SELECT 1 FROM (SELECT pg_stat_force_next_flush()) AS flushed');
  };

  const statementsFor = async (queue: string, count: number) => {
    expect((await rpc(t.url, 'createQueue', { name: queue })).status).toBe(200);
    // Its event, heard before the subscriptions open, would otherwise send them this state after they are ready.
    const created = () => rpc(t.url, 'createTask', { queueName: queue, name: 'waiting', target: { url: 'http://127.0.0.1:9/never' } });
    expect((await announced(t.gateway, 'queueTasks', queue, created)).status).toBe(200);
    const watch = watchSubscriptions(t.gateway);
    const subs = subscribe(t.url, `subscription { tasksSummaryChanged(queueName: "${queue}") { ready cancelled } }`, count);
    try {
      await watch.ready('queueTasks', queue, count);
      const before = await tableScans(t.gateway);
      await cancelUnannounced(queue);
      await eventually(async () => subs.every((s) => data(s).length > 0), 15_000, 10);
      // The bus is back and everything it told is handled.
      await watch.ready('queueTasks', queue, count);
      const statements = (await tableScans(t.gateway)) - before;
      for (const sub of subs) expect(data(sub)).toEqual([{ tasksSummaryChanged: { ready: 0, cancelled: 1 } }]);
      return statements;
    } finally {
      await Promise.all(subs.map((s) => s.close()));
    }
  };

  it('re-reads each key once, not once per subscriber, and every subscriber gets what changed in the gap', async () => {
    const one = await statementsFor('resync-one', 1);
    const many = await statementsFor('resync-many', 100);
    expect(one).toBeGreaterThan(0);
    expect(many).toBe(one);
  }, 60_000);
});
