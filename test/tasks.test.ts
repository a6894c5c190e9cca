import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import pg from 'pg';
import { DATABASES } from './helpers/databases.js';
import { gql, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { startTaskSink, type TaskSink } from './helpers/task-sink.js';
import { startTasksGateway, taskCalls, type TasksGateway } from './helpers/tasks-gateway.js';
import { watchSubscriptions } from './helpers/subscriptions.js';
import { taskEventKey } from '../src/db/sql/taskEvents.js';
import { overSse, overWs } from './helpers/transports.js';

// The tasks area end to end on a real gateway with a real HTTP sink on loopback: the seven legacy paths and their
// GraphQL twins, the transition rules, and the dispatcher (rate, dependencies, schedule time, retries, hand-back on
// stop, live status). Pause, resume, close and a rate change, whose tasks must start at once (a bound on time), are
// in tasks-rate-change.test.ts, which runs alone.

const NOT_FOUND = -32004;
const CONFLICT = -32009;
const INVALID_PARAMS = -32602;

describe.each(DATABASES)('tasks on %s', (kind) => {
  let g: TasksGateway;
  let t: TestGateway;
  let url: string;
  let sink: TaskSink;
  const { target, create, get, statusOf, summary } = taskCalls(() => g);

  beforeAll(async () => {
    g = await startTasksGateway(kind);
    ({ t, url, sink } = g);
  }, 60_000);
  afterAll(() => g?.close());

  it('createTask is refused clearly, changing nothing, when the queue is missing or CLOSE or the input is wrong', async () => {
    const missing = await create('nowhere', 'a');
    expect(missing.body.error).toMatchObject({ code: NOT_FOUND, message: expect.stringContaining('queue "nowhere" not found') });
    await rpc(url, 'createQueue', { name: 'shut', status: 'CLOSE' });
    const closed = await create('shut', 'a');
    expect(closed.body.error).toMatchObject({ code: CONFLICT, message: expect.stringContaining('queue "shut" is CLOSE') });
    await rpc(url, 'createQueue', { name: 'checks', rate: 1 });
    await rpc(url, 'pauseQueue', { name: 'checks' });
    const bad = await rpc(url, 'createTask', { queueName: 'checks', name: 'bad name!', target: { url: 'ftp://x', timeoutSeconds: 0 }, maxAttempts: 0 });
    expect(bad.body.error.code).toBe(INVALID_PARAMS);
    expect(bad.body.error.data.fields.map((f: { field: string }) => f.field).sort()).toEqual(['params.maxAttempts', 'params.name', 'params.target.timeoutSeconds', 'params.target.url']);
    const reserved = await create('checks', 'r', { target: target('/ok', { headers: { 'X-Task-Name': 'spoof' } }) });
    expect(reserved.body.error.code).toBe(INVALID_PARAMS);
    const unknownDep = await create('checks', 'd', { dependsOn: ['ghost'] });
    expect(unknownDep.body.error).toMatchObject({ code: INVALID_PARAMS, message: expect.stringContaining('no task "ghost" in queue "checks"') });
    expect((await create('checks', 'once')).body.result).toMatchObject({ name: 'once', status: 'READY', attempts: 0, maxAttempts: 20, minBackoffMs: 1000, maxBackoffMs: 3_600_000 });
    expect((await create('checks', 'once')).body.error).toMatchObject({ code: CONFLICT, message: expect.stringContaining('already exists') });
    expect(await summary('shut')).toEqual({ queueName: 'shut', total: 0, BLOCKED: 0, READY: 0, RUNNING: 0, SUCCEEDED: 0, FAILED: 0, CANCELLED: 0 });
    expect(await summary('checks')).toMatchObject({ total: 1, READY: 1 });
    expect((await rpc(url, 'getTasksSummary', { queueName: 'nowhere' })).body.error.code).toBe(NOT_FOUND);
    expect((await rpc(url, 'getTask', { queueName: 'checks', name: 'nope' })).body.error.code).toBe(NOT_FOUND);
  });

  it('lists by name a page at a time and searches by queue, name prefix, description and status with rowsCount', async () => {
    await rpc(url, 'createQueue', { name: 'lists' });
    await rpc(url, 'pauseQueue', { name: 'lists' });
    for (const [name, description] of [['c-report', 'Monthly REPORT'], ['a-mail', 'send mail'], ['b-report', 'weekly report']]) {
      await create('lists', name!, { description });
    }
    await rpc(url, 'cancelTask', { queueName: 'lists', name: 'a-mail' });
    const page0 = await rpc(url, 'listTasks', { queueName: 'lists', pageSize: 2 });
    expect(page0.body.result).toMatchObject({ totalCount: 3, pageNumber: 0, pageSize: 2 });
    expect(page0.body.result.tasks.map((x: { name: string }) => x.name)).toEqual(['a-mail', 'b-report']);
    const page1 = await rpc(url, 'listTasks', { queueName: 'lists', pageSize: 2, pageNumber: 1 });
    expect(page1.body.result.tasks.map((x: { name: string }) => x.name)).toEqual(['c-report']);
    const byText = await rpc(url, 'searchTasks', { queueName: 'lists', description: 'report' });
    expect(byText.body.rowsCount).toBe(2);
    expect(byText.body.result.map((x: { name: string }) => x.name)).toEqual(['b-report', 'c-report']);
    expect((await rpc(url, 'searchTasks', { queueName: 'lists', name: 'c-' })).body.rowsCount).toBe(1);
    expect((await rpc(url, 'searchTasks', { queueName: 'lists', status: 'CANCELLED' })).body.result.map((x: { name: string }) => x.name)).toEqual(['a-mail']);
    expect((await rpc(url, 'searchTasks', { status: 'LOST' })).body.error.code).toBe(INVALID_PARAMS);
    // The GraphQL twins: the same filters on `tasks` and on a queue's `tasks` connection.
    const twin = await gql(url, `{ tasks(filter: {queueName: "lists", description: "REPORT"}, first: 1) { totalCount nodes { name } pageInfo { hasNextPage } }
      queue(name: "lists") { tasks(filter: {status: READY}, orderBy: NAME_DESC) { totalCount nodes { name status target { url method timeoutSeconds } } } }
      tasksSummary(queueName: "lists") { total ready cancelled running } }`);
    expect(twin.errors).toBeUndefined();
    expect(twin.data).toEqual({
      tasks: { totalCount: 2, nodes: [{ name: 'b-report' }], pageInfo: { hasNextPage: true } },
      queue: {
        tasks: {
          totalCount: 2,
          nodes: ['c-report', 'b-report'].map((name) => ({ name, status: 'READY', target: { url: `${sink.url}/ok`, method: 'POST', timeoutSeconds: 30 } })),
        },
      },
      tasksSummary: { total: 3, ready: 2, cancelled: 1, running: 0 },
    });
  });

  it('searches take %, _ and \\ literally: name prefix and description, legacy and GraphQL', async () => {
    await rpc(url, 'createQueue', { name: 'wild' });
    await rpc(url, 'pauseQueue', { name: 'wild' });
    for (const [name, description] of [['ab1', 'plain'], ['a-1', '100% sure'], ['a_1', 'snake_case \\ slash'], ['b1', 'other']]) {
      await create('wild', name!, { description });
    }
    const names = async (params: Record<string, unknown>) => {
      const r = await rpc(url, 'searchTasks', { queueName: 'wild', ...params });
      expect(r.body.rowsCount).toBe(r.body.result.length);
      return r.body.result.map((x: { name: string }) => x.name);
    };
    expect(await names({ name: 'a_' })).toEqual(['a_1']);
    expect(await names({ name: '%' })).toEqual([]);
    expect(await names({ description: '%' })).toEqual(['a-1']);
    expect(await names({ description: '_' })).toEqual(['a_1']);
    expect(await names({ description: '\\' })).toEqual(['a_1']);
    expect(await names({ description: '0% S' })).toEqual(['a-1']);
    const twin = await gql(url, `{ byName: tasks(filter: {queueName: "wild", name: "a_"}) { totalCount nodes { name } }
      byText: tasks(filter: {queueName: "wild", description: "%"}) { totalCount nodes { name } }
      slash: tasks(filter: {queueName: "wild", description: "\\\\"}) { totalCount nodes { name } } }`);
    expect(twin.errors).toBeUndefined();
    expect(twin.data).toEqual({
      byName: { totalCount: 1, nodes: [{ name: 'a_1' }] },
      byText: { totalCount: 1, nodes: [{ name: 'a-1' }] },
      slash: { totalCount: 1, nodes: [{ name: 'a_1' }] },
    });
  });

  it('never runs more than the queue rate at once, and does reach it (rate 3, 30 tasks)', async () => {
    await rpc(url, 'createQueue', { name: 'rated', rate: 3 });
    await rpc(url, 'pauseQueue', { name: 'rated' });
    for (let i = 0; i < 30; i++) await create('rated', `t${String(i).padStart(2, '0')}`, { target: target('/work', { url: `${sink.url}/work?ms=60` }), payload: { i } });
    sink.resetMax();
    await rpc(url, 'resumeQueue', { name: 'rated' });
    await eventually(async () => (await summary('rated')).SUCCEEDED === 30, 20_000);
    expect(sink.maxConcurrent).toBe(3);
    const hits = sink.hits.filter((h) => h.queue === 'rated');
    expect(hits).toHaveLength(30);
    expect(hits[0]).toMatchObject({ method: 'POST', contentType: 'application/json', attempt: 1 });
    expect(JSON.parse(hits.find((h) => h.task === 't07')!.body)).toEqual({ i: 7 });
    const done = await get('rated', 't07');
    expect(done).toMatchObject({ status: 'SUCCEEDED', attempts: 1, result: { statusCode: 200, body: 'done t07' }, lastError: null });
    expect(Date.parse(done.finishTime)).toBeGreaterThanOrEqual(Date.parse(done.startTime));
  }, 30_000);

  it("runs no more of a queue's tasks at once than its maxConcurrentDispatches (one process), and does reach it", async () => {
    await rpc(url, 'createQueue', { name: 'capped', rate: 20, maxConcurrentDispatches: 4 });
    await rpc(url, 'pauseQueue', { name: 'capped' });
    for (let i = 0; i < 20; i++) await create('capped', `c${i}`, { target: target('/work', { url: `${sink.url}/work?ms=80` }) });
    sink.resetMax();
    await rpc(url, 'resumeQueue', { name: 'capped' });
    await eventually(async () => (await summary('capped')).SUCCEEDED === 20, 20_000);
    expect(sink.maxConcurrent).toBe(4);
  }, 30_000);

  it('a task attempt deadline above TASK_MAX_TIMEOUT_SECONDS (600) is refused by both doors, naming the setting', async () => {
    await rpc(url, 'createQueue', { name: 'deadlines' });
    const legacy = await create('deadlines', 'long', { target: target('/ok', { timeoutSeconds: 601 }) });
    expect(legacy.body.error.code).toBe(INVALID_PARAMS);
    expect(legacy.body.error.data.fields).toEqual([
      { field: 'params.target.timeoutSeconds', message: 'must be at most 600 (TASK_MAX_TIMEOUT_SECONDS: the longest attempt a gateway process holds a task slot for)' },
    ]);
    const graphql = await gql(url, 'mutation($i: CreateTaskInput!) { createTask(input: $i) { name } }', { i: { queueName: 'deadlines', name: 'long', target: { url: `${sink.url}/ok`, timeoutSeconds: 1800 } } });
    expect(graphql.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'input.target.timeoutSeconds' }] });
    expect((await create('deadlines', 'longest', { target: target('/ok', { timeoutSeconds: 600 }) })).status).toBe(200);
    expect((await rpc(url, 'getTask', { queueName: 'deadlines', name: 'long' })).body.error.code).toBe(NOT_FOUND);
  });

  it('cancel takes only READY or BLOCKED tasks; restart only FAILED ones; retries back off up to maxAttempts, then FAILED', async () => {
    await rpc(url, 'createQueue', { name: 'rules' });
    await rpc(url, 'pauseQueue', { name: 'rules' });
    await create('rules', 'later', { scheduleTime: new Date(Date.now() + 3_600_000).toISOString() });
    await create('rules', 'now');
    expect((await rpc(url, 'cancelTask', { queueName: 'rules', name: 'later' })).body.result).toMatchObject({ status: 'CANCELLED' });
    expect((await rpc(url, 'cancelTask', { queueName: 'rules', name: 'now' })).body.result).toMatchObject({ status: 'CANCELLED' });
    const again = await rpc(url, 'cancelTask', { queueName: 'rules', name: 'now' });
    expect(again.body.error).toMatchObject({ code: CONFLICT, message: expect.stringContaining('is CANCELLED; cancelTask accepts only READY or BLOCKED') });
    expect((await rpc(url, 'restartTask', { queueName: 'rules', name: 'now' })).body.error).toMatchObject({ code: CONFLICT, message: expect.stringContaining('accepts only FAILED') });

    await rpc(url, 'resumeQueue', { name: 'rules' });
    const t0 = Date.now();
    await create('rules', 'flaky', { target: target('/fail'), maxAttempts: 3, minBackoffMs: 100, maxBackoffMs: 150 });
    const failed = await eventually(async () => {
      const task = await get('rules', 'flaky');
      return task.status === 'FAILED' && task;
    });
    expect(failed).toMatchObject({ attempts: 3, result: { statusCode: 500, body: 'broken' }, lastError: expect.stringContaining('gave up after 3 attempt(s): HTTP 500') });
    const attempts = sink.hits.filter((h) => h.task === 'flaky');
    expect(attempts.map((h) => h.attempt)).toEqual([1, 2, 3]);
    expect(attempts[1]!.start - attempts[0]!.start).toBeGreaterThanOrEqual(70); // backoff 100 ms, jittered by 20 %
    expect(attempts[2]!.start - attempts[1]!.start).toBeGreaterThanOrEqual(140); // doubled (160-240 ms jittered), capped at 150 ms
    expect(Date.now() - t0).toBeLessThan(5000);
    expect((await rpc(url, 'cancelTask', { queueName: 'rules', name: 'flaky' })).body.error.code).toBe(CONFLICT);
    expect(await statusOf('rules', 'flaky')).toBe('FAILED');

    const restarted = await rpc(url, 'restartTask', { queueName: 'rules', name: 'flaky' });
    expect(restarted.body.result).toMatchObject({ status: 'READY', attempts: 0 });
    await eventually(async () => sink.hits.filter((h) => h.task === 'flaky').length === 6 && (await statusOf('rules', 'flaky')) === 'FAILED');
  }, 30_000);

  it('dependencies and schedule time keep a task BLOCKED until they are met', async () => {
    await rpc(url, 'createQueue', { name: 'deps', rate: 5 });
    const at = new Date(Date.now() + 1200);
    await create('deps', 'first', { target: target('/slow', { url: `${sink.url}/slow?ms=300` }) });
    const second = await create('deps', 'second', { dependsOn: ['first'] });
    expect(second.body.result).toMatchObject({ status: 'BLOCKED', dependsOn: ['first'] });
    const timed = await create('deps', 'timed', { scheduleTime: at.toISOString() });
    expect(timed.body.result).toMatchObject({ status: 'BLOCKED', scheduleTime: at.toISOString() });
    await eventually(async () => (await statusOf('deps', 'second')) === 'SUCCEEDED');
    const [first, then] = [sink.hits.find((h) => h.task === 'first')!, sink.hits.find((h) => h.task === 'second')!];
    expect(then.start).toBeGreaterThanOrEqual(first.end!);
    await eventually(async () => (await statusOf('deps', 'timed')) === 'SUCCEEDED', 5000);
    expect(sink.hits.find((h) => h.task === 'timed')!.start).toBeGreaterThanOrEqual(at.getTime());
    // A dependency that already succeeded does not block.
    expect((await create('deps', 'third', { dependsOn: ['first', 'second'] })).body.result.status).toBe('READY');
  }, 20_000);

  it('refuses to delete a queue while one of its tasks runs, then deletes it with its tasks', async () => {
    await rpc(url, 'createQueue', { name: 'doomed' });
    await create('doomed', 'held', { target: target('/slow', { url: `${sink.url}/slow?ms=700` }) });
    await eventually(async () => (await statusOf('doomed', 'held')) === 'RUNNING');
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('gateway_tasks{queue="doomed",status="RUNNING"} 1');
    const refused = await rpc(url, 'deleteQueue', { name: 'doomed' });
    expect(refused.body.error).toMatchObject({ code: CONFLICT, message: expect.stringContaining('RUNNING task') });
    await eventually(async () => (await statusOf('doomed', 'held')) === 'SUCCEEDED');
    expect((await rpc(url, 'deleteQueue', { name: 'doomed' })).body.result.name).toBe('doomed');
    expect((await rpc(url, 'getTask', { queueName: 'doomed', name: 'held' })).body.error.code).toBe(NOT_FOUND);
  });

  it('a graphql-ws client sees READY, RUNNING, SUCCEEDED in order, then the subscription completes; tasksSummaryChanged streams over server-sent events', async () => {
    await rpc(url, 'createQueue', { name: 'live' });
    const subscriptions = watchSubscriptions(t.gateway);
    const client = createClient({ url: `${url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    const seen: string[] = [];
    const finished = new Promise<void>((resolve, reject) => {
      client.subscribe<{ taskStatusChanged: { status: string; name: string; task: { attempts: number } | null } }>(
        { query: 'subscription { taskStatusChanged(queueName: "live", name: "watched") { status name task { attempts } } }' },
        {
          next: ({ data, errors }) => {
            if (errors) reject(new Error(JSON.stringify(errors)));
            seen.push(data!.taskStatusChanged.status);
          },
          error: reject,
          // The server completes the subscription after the end status: nothing more can come.
          complete: resolve,
        },
      );
    });
    const controller = new AbortController();
    const sse = await fetch(`${url}/graphql`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { tasksSummaryChanged(queueName: "live") { total ready running succeeded } }' }),
    });
    expect(sse.status).toBe(200);
    await Promise.all([subscriptions.ready('task', taskEventKey('live', 'watched')), subscriptions.ready('queueTasks', 'live')]);
    await gql(url, 'mutation($i: CreateTaskInput!) { createTask(input: $i) { status } }', {
      i: { queueName: 'live', name: 'watched', target: { url: `${sink.url}/slow?ms=100`, headers: { 'x-trace': '1' } }, payload: { hello: 'world' } },
    });
    await finished;
    await client.dispose();
    expect(seen).toEqual(['READY', 'RUNNING', 'SUCCEEDED']);
    const reader = sse.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('"succeeded":1')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    controller.abort();
    // Each event carries the counts as they are when it is read: the task is counted from its creation to its end.
    const events = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)).data.tasksSummaryChanged);
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events.every((e: { total: number }) => e.total === 1)).toBe(true);
    expect(events.at(-1)).toEqual({ total: 1, ready: 0, running: 0, succeeded: 1 });
  });

  it('a subscription to a task already in an end status gets that status at once and completes, on SSE and graphql-ws', async () => {
    await rpc(url, 'createQueue', { name: 'ended' });
    await create('ended', 'done', { target: target('/ok') });
    await create('ended', 'dropped', { scheduleTime: new Date(Date.now() + 3_600_000).toISOString() });
    await rpc(url, 'cancelTask', { queueName: 'ended', name: 'dropped' });
    await eventually(async () => (await statusOf('ended', 'done')) === 'SUCCEEDED');
    const query = 'subscription($n: String!) { taskStatusChanged(queueName: "ended", name: $n) { status } }';
    for (const [name, status] of [['done', 'SUCCEEDED'], ['dropped', 'CANCELLED']] as const) {
      // A limit above one: the answer must end by itself with `complete`, not because the reader stopped.
      const sse = await overSse(url, query, { n: name }, {}, 5);
      expect(sse.results).toEqual([{ data: { taskStatusChanged: { status } } }]);
      const ws = await overWs(url, query, { n: name }, { limit: 5 });
      expect(ws.results).toEqual([{ data: { taskStatusChanged: { status } } }]);
    }
  });
});

describe('TASK_MAX_TIMEOUT_SECONDS (PostgreSQL)', () => {
  it('an attempt runs with the cap as its deadline, even for a task stored with a longer one before the cap was lowered', async () => {
    const sink = await startTaskSink();
    const t = await startTestGateway('postgres', { TASK_MAX_TIMEOUT_SECONDS: '1', TASK_POLL_MS: '200', SCHEDULER: 'off', DELIVERY_WORKER: 'off' });
    const sql = new pg.Client({ connectionString: t.db.url });
    await sql.connect();
    try {
      await rpc(t.url, 'createQueue', { name: 'short', rate: 5 });
      await rpc(t.url, 'pauseQueue', { name: 'short' });
      for (const name of ['at-cap', 'stored-longer']) {
        expect((await rpc(t.url, 'createTask', { queueName: 'short', name, maxAttempts: 1, target: { url: `${sink.url}/hold`, timeoutSeconds: 1 } })).status).toBe(200);
      }
      // As a task created while the cap was 1800 holds it.
      await sql.query(`UPDATE "Task" SET target = jsonb_set(target, '{timeoutSeconds}', '1800') WHERE name = 'stored-longer'`);
      await rpc(t.url, 'resumeQueue', { name: 'short' });
      const failed = await eventually(async () => {
        const tasks = await Promise.all(['at-cap', 'stored-longer'].map(async (name) => (await rpc(t.url, 'getTask', { queueName: 'short', name })).body.result));
        return tasks.every((task) => task.status === 'FAILED') && tasks;
      }, 10_000);
      for (const task of failed) {
        expect(task.lastError).toMatch(/no answer from .*\/hold within 1 s/);
        expect(Date.parse(task.finishTime) - Date.parse(task.startTime)).toBeLessThan(3000);
      }
    } finally {
      await sql.end();
      await t.close();
      await sink.close();
    }
  }, 30_000);
});

describe('graceful stop hands running tasks back (PostgreSQL)', () => {
  it('a task interrupted by close() is READY again, its attempt not counted and no lease left', async () => {
    const sink = await startTaskSink();
    const t = await startTestGateway('postgres', { TASK_STOP_WAIT_MS: '100' });
    try {
      await rpc(t.url, 'createQueue', { name: 'stopping' });
      await rpc(t.url, 'createTask', { queueName: 'stopping', name: 'held', target: { url: `${sink.url}/hold` } });
      await eventually(async () => sink.hits.some((h) => h.task === 'held'));
      expect((await rpc(t.url, 'getTask', { queueName: 'stopping', name: 'held' })).body.result).toMatchObject({ status: 'RUNNING', attempts: 1 });
      await t.gateway.close();
      const client = new pg.Client({ connectionString: t.db.url });
      await client.connect();
      const { rows } = await client.query(`SELECT status, attempts, "lockedBy", "lockedUntil", "lastError" FROM "Task" WHERE name = 'held'`);
      await client.end();
      expect(rows).toEqual([{ status: 'READY', attempts: 0, lockedBy: null, lockedUntil: null, lastError: 'handed back: the gateway process running it stopped' }]);
    } finally {
      await t.gateway.close();
      await sink.close();
      await t.db.drop();
    }
  });
});
