import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, NO_WORKERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';

// What the operator console reads that the API did not give before: `viewer` (what the caller's key may run), a
// queue's task counts in the queue list, the activity per minute of tasks, job instances and deliveries, every
// notification unit by system and status, and a job's latest instances. On both databases, with AUTH=on.

const minute = (date: Date) => new Date(Math.floor(date.getTime() / 60_000) * 60_000).toISOString();

describe.each(DATABASES)('console reads on %s', (kind) => {
  let t: TestGateway;
  let admin: Record<string, string>;
  let reader: Record<string, string>;
  const ask = <T = Record<string, any>>(query: string, variables: Record<string, unknown> = {}, headers = admin) => gql<T>(t.url, query, variables, headers);

  beforeAll(async () => {
    t = await startTestGateway(kind, { ...NO_WORKERS, AUTH: 'on' });
    admin = bearer(await makeKey(t, ['admin:all']));
    reader = bearer(await makeKey(t, ['queues:read', 'tasks:read']));
  });
  afterAll(() => t?.close());

  it('viewer tells any valid key its scopes and the root fields it may run; no key is 401', async () => {
    const fields = '{ viewer { authRequired keyName scopes systemId allowedFields } }';
    const read = await ask(fields, {}, reader);
    expect(read.errors).toBeUndefined();
    const viewer = read.data!.viewer;
    expect(viewer).toMatchObject({ authRequired: true, keyName: 'test queues:read,tasks:read', scopes: ['queues:read', 'tasks:read'], systemId: null });
    expect(viewer.allowedFields).toEqual(expect.arrayContaining(['Query.queues', 'Query.tasks', 'Query.taskActivity', 'Subscription.queueChanged', 'Query.viewer']));
    expect(viewer.allowedFields).not.toContain('Mutation.pauseQueue');
    expect(viewer.allowedFields).not.toContain('Query.jobs');
    expect(viewer.allowedFields).not.toContain('Query.apiKeys');
    // A key with no scope of any area still learns what it is.
    const bare = bearer(await makeKey(t, ['identity:read'], 'sys-a'));
    const mine = await ask(fields, {}, bare);
    expect(mine.data!.viewer).toMatchObject({ scopes: ['identity:read'], systemId: 'sys-a' });
    expect(mine.data!.viewer.allowedFields).toEqual(['Query.organization', 'Query.person', 'Query.viewer']);
    const all = await ask(fields);
    expect(all.data!.viewer.allowedFields).toEqual(expect.arrayContaining(['Mutation.pauseQueue', 'Mutation.deleteQueue', 'Mutation.runJob', 'Query.apiKeys']));
    // What the list says is what the gateway then lets through.
    const refused = await ask('mutation { pauseQueue(name: "nope") { name } }', {}, reader);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const none = await gql(t.url, fields);
    expect(none.status).toBe(401);
  });

  it('Queue.tasksSummary counts each listed queue by status, zeros included', async () => {
    for (const name of ['c-one', 'c-two', 'c-empty']) await ask('mutation($n: String!) { createQueue(input: {name: $n}) { name } }', { n: name });
    const task = (queueName: string, name: string, scheduleTime?: string) =>
      ask('mutation($i: CreateTaskInput!) { createTask(input: $i) { status } }', { i: { queueName, name, target: { url: 'http://127.0.0.1:9/x' }, ...(scheduleTime && { scheduleTime }) } });
    await task('c-one', 'a');
    await task('c-one', 'b');
    await task('c-one', 'later', '2099-01-01T00:00:00Z');
    await task('c-two', 'a');
    await ask('mutation { cancelTask(queueName: "c-two", name: "a") { status } }');
    const listed = await ask('{ queues(filter: {namePrefix: "c-"}) { nodes { name tasksSummary { queueName total ready blocked cancelled running succeeded failed } } } }', {}, reader);
    expect(listed.errors).toBeUndefined();
    expect(listed.data!.queues.nodes).toEqual([
      { name: 'c-empty', tasksSummary: { queueName: 'c-empty', total: 0, ready: 0, blocked: 0, cancelled: 0, running: 0, succeeded: 0, failed: 0 } },
      { name: 'c-one', tasksSummary: { queueName: 'c-one', total: 3, ready: 2, blocked: 1, cancelled: 0, running: 0, succeeded: 0, failed: 0 } },
      { name: 'c-two', tasksSummary: { queueName: 'c-two', total: 1, ready: 0, blocked: 0, cancelled: 1, running: 0, succeeded: 0, failed: 0 } },
    ]);
  });

  it('taskActivity and jobActivity count what ended in each of the last minutes, oldest first, zeros included', async () => {
    await ask('mutation { createQueue(input: {name: "act"}) { name } }');
    const db = t.gateway.services.db;
    const now = new Date();
    const ended = [
      { name: 'ok-now', status: 'SUCCEEDED', at: now },
      { name: 'ok-now-2', status: 'SUCCEEDED', at: now },
      { name: 'bad-now', status: 'FAILED', at: now },
      { name: 'ok-5', status: 'SUCCEEDED', at: new Date(now.getTime() - 5 * 60_000) },
      { name: 'old', status: 'FAILED', at: new Date(now.getTime() - 2 * 3600_000) },
      { name: 'gone', status: 'CANCELLED', at: now },
    ] as const;
    for (const e of ended) {
      await db.task.create({ data: { queueName: 'act', name: e.name, status: e.status, target: { url: 'http://127.0.0.1:9/x' }, finishTime: e.at } });
    }
    const answer = await ask('{ taskActivity { minute succeeded failed } ten: taskActivity(minutes: 10) { minute } }', {}, reader);
    expect(answer.errors).toBeUndefined();
    const series = answer.data!.taskActivity as { minute: string; succeeded: number; failed: number }[];
    expect(series).toHaveLength(60);
    expect(answer.data!.ten).toHaveLength(10);
    expect(series.map((m) => Date.parse(m.minute)).every((m, i, all) => i === 0 || m - all[i - 1]! === 60_000)).toBe(true);
    const at = (date: Date) => series.find((m) => m.minute === minute(date));
    expect(at(now)).toEqual({ minute: minute(now), succeeded: 2, failed: 1 });
    expect(at(new Date(now.getTime() - 5 * 60_000))).toMatchObject({ succeeded: 1, failed: 0 });
    expect(series.reduce((n, m) => n + m.succeeded + m.failed, 0)).toBe(4);

    await ask('mutation { createJob(input: {name: "act-job", schedule: "0 0 1 1 *", target: {http: {url: "http://127.0.0.1:9/x"}}}) { name } }');
    for (const status of ['SUCCEEDED', 'FAILED', 'FAILED', 'RUNNING'] as const) {
      await db.jobInstance.create({ data: { jobName: 'act-job', trigger: 'MANUAL', status, scheduledTime: now, startTime: now, ...(status !== 'RUNNING' && { finishTime: now }) } });
    }
    const jobs = await ask('{ jobActivity(minutes: 3) { minute succeeded failed } }');
    expect(jobs.data!.jobActivity).toHaveLength(3);
    expect(jobs.data!.jobActivity.at(-1)).toEqual({ minute: minute(now), succeeded: 1, failed: 2 });
    expect((await ask('{ jobActivity { minute } }', {}, reader)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    for (const minutes of [0, 1441]) {
      const refused = await ask('query($m: Int) { taskActivity(minutes: $m) { minute } }', { m: minutes });
      expect(refused.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
      expect(refused.errors?.[0]?.message).toContain('minutes');
    }
  });

  it('notifications lists units of every type by system, status and request; a bound key sees its own system', async () => {
    const db = t.gateway.services.db;
    const now = Date.now();
    const requestA = randomUUID();
    const requestB = randomUUID();
    const unit = (incomingId: string, systemId: string, status: string, recipient: string, ageMs: number, extra: Record<string, unknown> = {}) =>
      db.notification.create({
        data: { incomingId, systemId, channel: 'sms', type: 'sms', recipient, payload: { text: 'hi' }, status, attempts: 1, createTime: new Date(now - ageMs), updateTime: new Date(now - ageMs), ...extra },
      });
    await unit(requestA, 'sys-a', 'DELIVERED', '+100', 60_000, { deliveredTime: new Date(now - 60_000) });
    await unit(requestA, 'sys-a', 'FAILED', '+101', 60_000, { attempts: 5, lastError: 'no route' });
    await unit(requestB, 'sys-b', 'PENDING', '+200', 1000);
    const query = 'query($f: NotificationFilter) { notifications(filter: $f, first: 10) { totalCount nodes { incomingId systemId status recipient attempts lastError } } }';
    const all = await ask(query);
    expect(all.data!.notifications.totalCount).toBe(3);
    // Newest request first, a request's units together.
    const order = all.data!.notifications.nodes.map((n: { recipient: string }) => n.recipient) as string[];
    expect(order[0]).toBe('+200');
    expect(order.slice(1).sort()).toEqual(['+100', '+101']);
    const failed = await ask(query, { f: { systemId: 'sys-a', status: 'FAILED' } });
    expect(failed.data!.notifications.nodes).toEqual([{ incomingId: requestA, systemId: 'sys-a', status: 'FAILED', recipient: '+101', attempts: 5, lastError: 'no route' }]);
    expect((await ask(query, { f: { incomingId: requestB, channel: 'SMS' } })).data!.notifications.totalCount).toBe(1);
    expect((await ask(query, { f: { channel: 'EMAIL' } })).data!.notifications.totalCount).toBe(0);

    const bound = bearer(await makeKey(t, ['notifications:read'], 'sys-b'));
    const own = await ask(query, {}, bound);
    expect(own.data!.notifications.nodes.map((n: { systemId: string }) => n.systemId)).toEqual(['sys-b']);
    expect((await ask(query, { f: { systemId: 'sys-a' } }, bound)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await ask(query, { f: { incomingId: 'not-a-uuid' } })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

    const deliveries = await ask('{ deliveryActivity(minutes: 5) { minute succeeded failed } }');
    const series = deliveries.data!.deliveryActivity as { minute: string; succeeded: number; failed: number }[];
    expect(series.find((m) => m.minute === minute(new Date(now - 60_000)))).toMatchObject({ succeeded: 1, failed: 1 });
    expect(series.reduce((n, m) => n + m.succeeded + m.failed, 0)).toBe(2);
    const boundSeries = (await ask('{ deliveryActivity(minutes: 5) { succeeded failed } }', {}, bound)).data!.deliveryActivity as { succeeded: number; failed: number }[];
    expect(boundSeries.reduce((n, m) => n + m.succeeded + m.failed, 0)).toBe(0);
  });

  it("Job.recentInstances gives a job's latest instances, latest first, paged by the rule of every page", async () => {
    await ask('mutation { createJob(input: {name: "recent", schedule: "0 0 1 1 *", target: {http: {url: "http://127.0.0.1:9/x"}}}) { name } }');
    const db = t.gateway.services.db;
    const base = Date.now() - 3600_000;
    for (let i = 0; i < 7; i++) {
      const at = new Date(base + i * 60_000);
      await db.jobInstance.create({ data: { jobName: 'recent', trigger: 'SCHEDULE', status: 'SUCCEEDED', scheduledTime: at, startTime: at, finishTime: at } });
    }
    const listed = await ask('{ jobs(filter: {namePrefix: "recent"}) { nodes { name recentInstances { scheduledTime } three: recentInstances(first: 3) { scheduledTime } } } }');
    expect(listed.errors).toBeUndefined();
    const job = listed.data!.jobs.nodes[0];
    expect(job.recentInstances).toHaveLength(7);
    expect(job.three.map((i: { scheduledTime: string }) => i.scheduledTime)).toEqual([6, 5, 4].map((i) => new Date(base + i * 60_000).toISOString()));
    const tooMany = await ask('{ jobs { nodes { recentInstances(first: 501) { id } } } }');
    expect(tooMany.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
  });
});

describe('viewer with AUTH=off', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('pglite', NO_WORKERS);
  });
  afterAll(() => t?.close());

  it('needs no key and allows every root field', async () => {
    const answer = await gql(t.url, '{ viewer { authRequired keyName scopes allowedFields } }');
    expect(answer.data!.viewer).toMatchObject({ authRequired: false, keyName: null, scopes: [] });
    expect(answer.data!.viewer.allowedFields).toEqual(expect.arrayContaining(['Mutation.deleteQueue', 'Mutation.createApiKey', 'Subscription.jobInstanceChanged']));
  });
});
