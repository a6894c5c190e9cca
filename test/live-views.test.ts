import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, NO_WORKERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { sseSubscription, wsSubscription, type Events } from './helpers/subscriptions.js';
import { pageAfter } from '../console/src/api/cursor.js';

// What a live view (the operator console's queue page, task panel and queue list) needs from the subscriptions so
// that it misses nothing over its whole life: `current: true` makes the first event the state once the subscription
// listens (no read beside it that a change can slip between), `followRestarts` keeps a task's subscription through
// restarts made by anyone, and `queuesChanged` names every queue created, changed or deleted. Both transports, both
// databases.

const TRANSPORTS = [
  ['graphql-ws', wsSubscription],
  ['SSE', sseSubscription],
] as const;

const data = (events: Events) => events.events.map((e) => (e as { data?: Record<string, unknown> }).data);

describe.each(DATABASES)('live views on %s', (kind) => {
  let t: TestGateway;
  const open: Events[] = [];
  const ask = async (query: string, variables: Record<string, unknown> = {}) => {
    const answer = await gql(t.url, query, variables);
    expect(answer.errors, query).toBeUndefined();
    return answer.data!;
  };
  beforeAll(async () => {
    t = await startTestGateway(kind, NO_WORKERS);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  afterAll(() => t?.close());

  describe.each(TRANSPORTS)('over %s', (transport, subscribe) => {
    const follow = (query: string) => {
      const events = subscribe(t.url, query);
      open.push(events);
      return events;
    };

    it('queueChanged and tasksSummaryChanged with current: true start from the state, then every change', async () => {
      const name = `live-${transport}-q`;
      await ask('mutation($n: String!) { createQueue(input: {name: $n, rate: 4}) { name } }', { n: name });
      await ask('mutation($i: CreateTaskInput!) { createTask(input: $i) { name } }', { i: { queueName: name, name: 'a', target: { url: 'http://127.0.0.1:9/x' } } });
      const queue = follow(`subscription { queueChanged(name: "${name}", current: true) { name rate paused } }`);
      const summary = follow(`subscription { tasksSummaryChanged(queueName: "${name}", current: true) { total ready cancelled } }`);
      // The first events come without any change: the view is built from them alone.
      await eventually(async () => queue.events.length >= 1 && summary.events.length >= 1, 10_000, 10);
      expect(data(queue)[0]).toEqual({ queueChanged: { name, rate: 4, paused: false } });
      expect(data(summary)[0]).toEqual({ tasksSummaryChanged: { total: 1, ready: 1, cancelled: 0 } });
      await ask('mutation($n: String!) { changeQueueRate(name: $n, rate: 9) { rate } }', { n: name });
      await ask('mutation($n: String!) { cancelTask(queueName: $n, name: "a") { status } }', { n: name });
      await eventually(async () => data(queue).at(-1)?.queueChanged && (data(queue).at(-1)!.queueChanged as { rate: number }).rate === 9, 10_000, 10);
      await eventually(async () => (data(summary).at(-1)?.tasksSummaryChanged as { cancelled: number } | undefined)?.cancelled === 1, 10_000, 10);
      // Without the argument a subscription sends changes only, as before.
      const plain = follow(`subscription { queueChanged(name: "${name}") { rate } }`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(plain.events).toEqual([]);
    });

    it('a change made as the subscription starts is never missed: the last event is the state after it', async () => {
      const name = `race-${transport}`;
      await ask('mutation($n: String!) { createQueue(input: {name: $n, rate: 1}) { name } }', { n: name });
      for (let rate = 2; rate <= 6; rate++) {
        const queue = follow(`subscription { queueChanged(name: "${name}", current: true) { rate } }`);
        // No wait: the change races the subscription's start.
        await ask('mutation($n: String!, $r: Int!) { changeQueueRate(name: $n, rate: $r) { rate } }', { n: name, r: rate });
        await eventually(async () => (data(queue).at(-1)?.queueChanged as { rate: number } | undefined)?.rate === rate, 10_000, 10);
      }
    });

    it('taskStatusChanged with current and followRestarts: the status now, then a restart by anyone and what follows', async () => {
      const name = `task-${transport}`;
      await ask('mutation($n: String!) { createQueue(input: {name: $n}) { name } }', { n: name });
      await t.gateway.services.db.task.create({ data: { queueName: name, name: 'f', status: 'FAILED', target: { url: 'http://127.0.0.1:9/x' }, attempts: 3, lastError: 'boom' } });
      const following = follow(`subscription { taskStatusChanged(queueName: "${name}", name: "f", current: true, followRestarts: true) { status } }`);
      const once = follow(`subscription { taskStatusChanged(queueName: "${name}", name: "f") { status } }`);
      await eventually(async () => following.events.length >= 1 && once.events.length >= 1, 10_000, 10);
      expect(data(following)).toEqual([{ taskStatusChanged: { status: 'FAILED' } }]);
      // The end status is sent at once to a plain subscription too, which then completes.
      expect(data(once)).toEqual([{ taskStatusChanged: { status: 'FAILED' } }]);
      await ask('mutation($n: String!) { restartTask(queueName: $n, name: "f") { status } }', { n: name });
      await eventually(async () => data(following).length >= 2, 10_000, 10);
      await ask('mutation($n: String!) { cancelTask(queueName: $n, name: "f") { status } }', { n: name });
      await eventually(async () => data(following).length >= 3, 10_000, 10);
      expect(data(following).map((d) => (d!.taskStatusChanged as { status: string }).status)).toEqual(['FAILED', 'READY', 'CANCELLED']);
      expect(data(once)).toHaveLength(1);
      // A task not there yet sends nothing until it is.
      const later = follow(`subscription { taskStatusChanged(queueName: "${name}", name: "later", current: true) { status } }`);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(later.events).toEqual([]);
      await ask('mutation($i: CreateTaskInput!) { createTask(input: $i) { name } }', { i: { queueName: name, name: 'later', target: { url: 'http://127.0.0.1:9/x' } } });
      await eventually(async () => data(later).length >= 1, 10_000, 10);
      expect(data(later)[0]).toEqual({ taskStatusChanged: { status: 'READY' } });
    });

    it('queuesChanged names each queue created, changed or deleted, by any caller', async () => {
      const list = follow('subscription { queuesChanged }');
      const names = () => data(list).map((d) => d?.queuesChanged);
      // The stream says nothing before a change: queues are created until it has heard one.
      let i = 0;
      await eventually(async () => {
        await ask('mutation($n: String!) { createQueue(input: {name: $n}) { name } }', { n: `warm-${transport}-${i++}` });
        return names().length > 0;
      }, 10_000, 200);
      const name = `new-${transport}`;
      await ask('mutation($n: String!) { createQueue(input: {name: $n}) { name } }', { n: name });
      await eventually(async () => names().includes(name), 10_000, 10);
      const before = names().length;
      await ask('mutation($n: String!) { pauseQueue(name: $n) { name } }', { n: name });
      await ask('mutation($n: String!) { deleteQueue(name: $n) { name } }', { n: name });
      await eventually(async () => names().slice(before).includes(name), 10_000, 10);
    });
  });

  it("the console's page cursors are the gateway's: page n starts after the endCursor of page n - 1", async () => {
    await ask('mutation { createQueue(input: {name: "pages"}) { name } }');
    for (let i = 0; i < 12; i++) await ask('mutation($i: CreateTaskInput!) { createTask(input: $i) { name } }', { i: { queueName: 'pages', name: `p${String(i).padStart(2, '0')}`, target: { url: 'http://127.0.0.1:9/x' } } });
    const page = (after: string | null) =>
      ask('query($a: String) { queue(name: "pages") { tasks(first: 5, after: $a) { nodes { name } pageInfo { endCursor } } } }', { a: after }) as Promise<{ queue: { tasks: { nodes: { name: string }[]; pageInfo: { endCursor: string } } } }>;
    const one = await page(null);
    const two = await page(one.queue.tasks.pageInfo.endCursor);
    expect(pageAfter(1, 5)).toBeNull();
    expect(pageAfter(2, 5)).toBe(one.queue.tasks.pageInfo.endCursor);
    expect(pageAfter(3, 5)).toBe(two.queue.tasks.pageInfo.endCursor);
    expect((await page(pageAfter(3, 5))).queue.tasks.nodes.map((n) => n.name)).toEqual(['p10', 'p11']);
  });
});
