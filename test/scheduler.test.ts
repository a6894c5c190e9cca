import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, rpc, type TestGateway } from './helpers/gateway.js';
import { startSchedulerGateway, YEARLY, type SchedulerGateway } from './helpers/scheduler-gateway.js';
import { eventually, sleep, type Sink } from './helpers/sink.js';
import { watchSubscriptions } from './helpers/subscriptions.js';

// The ten job scheduler paths of spec 4.2, their GraphQL twins, retries, misfire, lost instances and the
// jobInstanceChanged subscription, on both databases. Firing every second, pause/resume and the attempt timeout,
// which bound when things happen, are in scheduler-timing.test.ts, which runs alone.

const NOT_FOUND = -32004;
const INVALID_PARAMS = -32602;
const CONFLICT = -32009;

describe.each(DATABASES)('job scheduler on %s', (kind) => {
  let g: SchedulerGateway;
  let t: TestGateway;
  let url: string;
  let sink: Sink;
  const http = (path?: string) => g.http(path);
  const countJobs = async () => (await rpc(url, 'list', { pageSize: 500 })).body.result.length as number;

  beforeAll(async () => {
    g = await startSchedulerGateway(kind);
    ({ t, url, sink } = g);
    for (const name of ['a.yearly', 'b.yearly', 'c.daily']) {
      const r = await rpc(url, 'create', { name, schedule: name === 'c.daily' ? '@daily' : YEARLY, target: http(), description: `job ${name}` });
      expect(r.body.result?.name, JSON.stringify(r.body)).toBe(name);
    }
  });
  afterAll(() => g?.close());

  it('create makes an ENABLED job with its first occurrence in the job time zone, and refuses a taken name', async () => {
    const before = Date.now();
    const r = await rpc(url, 'create', { name: 'ny.nine', schedule: '0 9 * * *', timeZone: 'America/New_York', target: http(), retryConfig: { retryCount: 2 } }, { id: 'c1' });
    expect(r.body).toMatchObject({
      jsonrpc: '2.0',
      id: 'c1',
      result: {
        name: 'ny.nine',
        status: 'ENABLED',
        timeZone: 'America/New_York',
        misfirePolicy: 'FIRE_ONCE',
        timeoutSeconds: 180,
        target: { kind: 'HTTP', http: { url: `${sink.url}/ok`, httpMethod: 'POST', headers: {}, body: null }, task: null },
        retryConfig: { retryCount: 2, minBackoffSeconds: 5, maxBackoffSeconds: 3600, maxDoublings: 5 },
        lastRunTime: null,
      },
    });
    const next = new Date(r.body.result.nextRunTime);
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.getTime() - before).toBeLessThanOrEqual(24 * 3600_000 + 3600_000);
    const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(next);
    expect(local).toBe('09:00');
    expect((await rpc(url, 'create', { name: 'ny.nine', schedule: YEARLY, target: http() })).body.error).toMatchObject({ code: CONFLICT, data: { code: 'CONFLICT' } });
  });

  it('bad cron, unknown time zone, bad target: clear invalid-params errors, nothing written', async () => {
    const jobs = await countJobs();
    const cron = await rpc(url, 'create', { name: 'bad.cron', schedule: '61 * * * *', target: http() });
    expect(cron.body.error.code).toBe(INVALID_PARAMS);
    expect(cron.body.error.data.fields).toEqual([{ field: 'params.schedule', message: expect.stringContaining('"61 * * * *" is not a valid cron expression') }]);
    const four = await rpc(url, 'create', { name: 'bad.cron', schedule: '* * * *', target: http() });
    expect(four.body.error.data.fields[0].message).toMatch(/has 4 field\(s\); a cron expression has 5 .* or 6 \(seconds first\)/);
    const tz = await rpc(url, 'create', { name: 'bad.tz', schedule: YEARLY, timeZone: 'Mars/Olympus', target: http() });
    expect(tz.body.error).toMatchObject({ code: INVALID_PARAMS, data: { fields: [{ field: 'params.timeZone', message: '"Mars/Olympus" is not an IANA time zone (for example "UTC" or "Europe/Berlin")' }] } });
    const target = await rpc(url, 'create', { name: 'bad.target', schedule: YEARLY, target: { http: { url: 'ftp://x' }, task: { queue: 'q' } } });
    const fields = target.body.error.data.fields.map((f: { field: string }) => f.field).sort();
    expect(fields).toEqual(['params.target', 'params.target.http.url']);
    const never = await rpc(url, 'create', { name: 'bad.never', schedule: '0 0 31 2 *', target: http() });
    expect(never.body.error.code).toBe(INVALID_PARAMS);
    expect(await countJobs()).toBe(jobs);
    for (const name of ['bad.cron', 'bad.tz', 'bad.target', 'bad.never']) expect((await rpc(url, 'get', { name })).body.error.code).toBe(NOT_FOUND);
  });

  it('get, unknown job, list as an array by name with paging', async () => {
    expect((await rpc(url, 'get', { name: 'a.yearly' })).body.result).toMatchObject({ name: 'a.yearly', description: 'job a.yearly', schedule: YEARLY });
    expect((await rpc(url, 'get', { name: 'nope' })).body.error).toMatchObject({ code: NOT_FOUND, message: 'job "nope" not found' });
    for (const m of ['get', 'delete', 'run', 'pause', 'resume']) expect((await rpc(url, m, { name: 'nope' })).body.error.code, m).toBe(NOT_FOUND);
    expect((await rpc(url, 'update', { name: 'nope', description: 'x' })).body.error.code).toBe(NOT_FOUND);
    const all = await rpc(url, 'list', {});
    expect(Array.isArray(all.body.result)).toBe(true);
    const names = all.body.result.map((j: { name: string }) => j.name);
    expect(names).toEqual([...names].sort());
    const page = await rpc(url, 'list', { pageSize: 1, pageNumber: 1 });
    expect(page.body.result.map((j: { name: string }) => j.name)).toEqual([names[1]]);
    expect((await rpc(url, 'list', { pageSize: 0 })).body.error.code).toBe(INVALID_PARAMS);
  });

  it('update changes fields; a schedule change recomputes nextRunTime; a bad cron changes nothing', async () => {
    const before = (await rpc(url, 'get', { name: 'b.yearly' })).body.result;
    const r = await rpc(url, 'update', { name: 'b.yearly', schedule: '30 * * * * *', description: 'every minute at :30' });
    expect(r.body.result).toMatchObject({ schedule: '30 * * * * *', description: 'every minute at :30' });
    const next = new Date(r.body.result.nextRunTime);
    expect(next.getUTCSeconds()).toBe(30);
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    expect(next.getTime()).not.toBe(Date.parse(before.nextRunTime));
    const bad = await rpc(url, 'update', { name: 'b.yearly', schedule: 'every day' });
    expect(bad.body.error.data.fields[0]).toMatchObject({ field: 'params.schedule' });
    const badTz = await rpc(url, 'update', { name: 'b.yearly', timeZone: 'Nowhere/Land' });
    expect(badTz.body.error.data.fields[0]).toMatchObject({ field: 'params.timeZone' });
    const after = (await rpc(url, 'get', { name: 'b.yearly' })).body.result;
    expect(after.schedule).toBe('30 * * * * *');
    expect(after.timeZone).toBe('UTC');
    const back = await rpc(url, 'update', { name: 'b.yearly', schedule: YEARLY, misfirePolicy: 'SKIP', timeoutSeconds: 5 });
    expect(back.body.result).toMatchObject({ schedule: YEARLY, misfirePolicy: 'SKIP', timeoutSeconds: 5 });
  });

  it('an HTTP failure is retried per the retry policy, then FAILED', async () => {
    await rpc(url, 'create', { name: 'broken', schedule: YEARLY, target: http('/fail'), retryConfig: { retryCount: 2, minBackoffSeconds: 0.1, maxDoublings: 1 } });
    const run = await rpc(url, 'run', { name: 'broken' });
    const failed = await eventually(async () => {
      const r = await rpc(url, 'searchJobInstance', { jobName: 'broken', status: 'FAILED' });
      return r.body.result[0];
    });
    expect(failed).toMatchObject({ id: run.body.result.id, attempts: 3, result: { httpStatus: 500, body: 'broken' } });
    expect(failed.error).toContain('HTTP 500');
    expect(sink.hits.filter((h) => h.instanceId === run.body.result.id).map((h) => h.attempt)).toEqual([1, 2, 3]);
  });

  it('a task target needs an existing queue; each firing creates a task there and succeeds when the task does', async () => {
    const missing = await rpc(url, 'create', { name: 'to.task', schedule: YEARLY, target: { task: { queue: 'no-such-queue', template: { x: 1 } } } });
    expect(missing.body.error).toMatchObject({ code: NOT_FOUND, message: expect.stringContaining('queue "no-such-queue" not found') });
    expect((await rpc(url, 'get', { name: 'to.task' })).body.error.code).toBe(NOT_FOUND);
    await rpc(url, 'createQueue', { name: 'jobs-q' });
    // A template the tasks area refuses: the instance FAILS and says why.
    const broken = await rpc(url, 'create', { name: 'to.task.bad', schedule: YEARLY, target: { task: { queue: 'jobs-q', template: { payload: { a: 1 } } } } });
    expect(broken.body.result.target).toEqual({ kind: 'TASK', http: null, task: { queue: 'jobs-q', template: { payload: { a: 1 } } } });
    const badRun = await rpc(url, 'run', { name: 'to.task.bad' });
    const failed = await eventually(async () => (await rpc(url, 'searchJobInstance', { jobName: 'to.task.bad', status: 'FAILED' })).body.result[0]);
    expect(failed).toMatchObject({ id: badRun.body.result.id, error: expect.stringContaining('template.target') });

    const template = { payload: { a: 1 }, target: { url: `${sink.url}/from-task` } };
    await rpc(url, 'create', { name: 'to.task', schedule: YEARLY, target: { task: { queue: 'jobs-q', template } } });
    const run = await rpc(url, 'run', { name: 'to.task' });
    const done = await eventually(async () => (await rpc(url, 'searchJobInstance', { jobName: 'to.task', status: 'SUCCEEDED' })).body.result[0]);
    const taskName = `to.task.${run.body.result.id}`;
    expect(done).toMatchObject({ id: run.body.result.id, result: { taskId: expect.any(String), detail: { queueName: 'jobs-q', name: taskName, status: 'SUCCEEDED' } } });
    expect((await rpc(url, 'getTask', { queueName: 'jobs-q', name: taskName })).body.result).toMatchObject({ status: 'SUCCEEDED', payload: { a: 1 } });
    expect(sink.hits.filter((h) => h.path === '/from-task').map((h) => h.body)).toEqual(['{"a":1}']);
    const search = await rpc(url, 'search', { targetKind: 'TASK', queue: 'jobs-q' });
    expect(search.body).toMatchObject({ rowsCount: 2 });
  });

  it('misfire after downtime: FIRE_ONCE fires one FIRED_LATE instance, SKIP records one SKIPPED instance', async () => {
    const db = t.gateway.services.db;
    // Yearly: a job due every minute also fired its next regular occurrence when the test crossed a minute boundary,
    // a second instance the assertions below would read as a wrongful catch-up.
    await rpc(url, 'create', { name: 'late.fire', schedule: YEARLY, target: http('/late'), status: 'PAUSED' });
    await rpc(url, 'create', { name: 'late.skip', schedule: YEARLY, target: http('/late'), status: 'PAUSED', misfirePolicy: 'SKIP' });
    // Downtime: both jobs were due three minutes ago and nobody fired them.
    const missed = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 3 * 60_000);
    await db.job.updateMany({ where: { name: { in: ['late.fire', 'late.skip'] } }, data: { status: 'ENABLED', nextRunTime: missed } });
    const fired = await eventually(async () => (await rpc(url, 'searchJobInstance', { jobName: 'late.fire', status: 'SUCCEEDED' })).body.result[0]);
    expect(fired).toMatchObject({ trigger: 'SCHEDULE', misfire: 'FIRED_LATE', scheduledTime: missed.toISOString() });
    const skipped = await eventually(async () => (await rpc(url, 'searchJobInstance', { jobName: 'late.skip' })).body.result[0]);
    expect(skipped).toMatchObject({ trigger: 'SCHEDULE', status: 'SKIPPED', misfire: 'SKIPPED', scheduledTime: missed.toISOString(), attempts: 0 });
    await sleep(300); // kept: time for a wrongful second instance (a second catch-up) to show
    for (const name of ['late.fire', 'late.skip']) {
      const job = (await rpc(url, 'get', { name })).body.result;
      expect(Date.parse(job.nextRunTime)).toBeGreaterThan(Date.now());
      expect((await rpc(url, 'searchJobInstance', { jobName: name })).body.rowsCount).toBe(1);
    }
    expect(sink.hits.filter((h) => h.jobName === 'late.skip')).toEqual([]);
    for (const name of ['late.fire', 'late.skip']) await rpc(url, 'delete', { name });
  });

  it('an instance whose process died (lease expired) is failed as lost; a live lease is left alone', async () => {
    const db = t.gateway.services.db;
    await rpc(url, 'create', { name: 'orphaned', schedule: YEARLY, target: http() });
    const past = new Date(Date.now() - 1000);
    const dead = await db.jobInstance.create({ data: { jobName: 'orphaned', trigger: 'MANUAL', scheduledTime: past, lockedBy: 'gw-dead', lockedUntil: past } });
    const alive = await db.jobInstance.create({ data: { jobName: 'orphaned', trigger: 'MANUAL', scheduledTime: past, lockedBy: 'gw-busy', lockedUntil: new Date(Date.now() + 600_000) } });
    const failed = await eventually(async () => (await rpc(url, 'searchJobInstance', { jobName: 'orphaned', status: 'FAILED' })).body.result[0]);
    expect(failed).toMatchObject({ id: dead.id, error: 'lost: the gateway process running it stopped before it finished' });
    expect((await db.jobInstance.findUniqueOrThrow({ where: { id: alive.id } })).status).toBe('RUNNING');
    await rpc(url, 'delete', { name: 'orphaned' });
  });

  it('search filters with rowsCount; searchJobInstance by status, trigger and time range, paged', async () => {
    // Instances to page through: a job that fires every second, paused once it has fired a few times.
    await rpc(url, 'create', { name: 'tick', schedule: '* * * * * *', target: http('/tick') });
    await eventually(async () => (await rpc(url, 'searchJobInstance', { jobName: 'tick', trigger: 'SCHEDULE' })).body.rowsCount >= 3);
    await rpc(url, 'pause', { name: 'tick' });
    const s = await rpc(url, 'search', { namePrefix: 'a.', status: 'ENABLED', targetKind: 'HTTP' });
    expect(s.body).toMatchObject({ rowsCount: 1, result: [{ name: 'a.yearly' }] });
    expect((await rpc(url, 'search', { namePrefix: 'zzz' })).body).toMatchObject({ result: [], rowsCount: 0 });
    expect((await rpc(url, 'search', { status: 'SLEEPING' })).body.error.data.fields[0].field).toBe('params.status');
    const all = await rpc(url, 'searchJobInstance', { jobName: 'tick', pageSize: 2 });
    expect(all.body.result).toHaveLength(2);
    expect(all.body.rowsCount).toBeGreaterThan(2);
    const times = all.body.result.map((i: { scheduledTime: string }) => Date.parse(i.scheduledTime));
    expect(times[0]).toBeGreaterThanOrEqual(times[1]);
    const page2 = await rpc(url, 'searchJobInstance', { jobName: 'tick', pageSize: 2, pageNumber: 1 });
    expect(Date.parse(page2.body.result[0].scheduledTime)).toBeLessThanOrEqual(times[1]);
    const from = new Date(times[1]).toISOString();
    const ranged = await rpc(url, 'searchJobInstance', { jobName: 'tick', from, to: new Date(times[0]).toISOString(), trigger: 'SCHEDULE' });
    expect(ranged.body.rowsCount).toBe(1);
    expect(ranged.body.result[0].scheduledTime).toBe(from);
    expect((await rpc(url, 'searchJobInstance', { from: 'yesterday' })).body.error.data.fields[0].field).toBe('params.from');
    expect((await rpc(url, 'searchJobInstance', { jobName: 'nope' })).body).toMatchObject({ result: [], rowsCount: 0 });
  });

  it('search takes % and _ in namePrefix literally, legacy and GraphQL', async () => {
    for (const name of ['w_1', 'wx1', 'w-1']) await rpc(url, 'create', { name, schedule: YEARLY, target: http() });
    const names = async (namePrefix: string) => (await rpc(url, 'search', { namePrefix })).body.result.map((j: { name: string }) => j.name);
    expect(await names('w_')).toEqual(['w_1']);
    expect(await names('%')).toEqual([]);
    expect(await names('\\')).toEqual([]);
    const twin = await gql(url, '{ a: jobs(filter: {namePrefix: "w_"}) { totalCount nodes { name } } b: jobs(filter: {namePrefix: "%"}) { totalCount } }');
    expect(twin.errors).toBeUndefined();
    expect(twin.data).toEqual({ a: { totalCount: 1, nodes: [{ name: 'w_1' }] }, b: { totalCount: 0 } });
    for (const name of ['w_1', 'wx1', 'w-1']) await rpc(url, 'delete', { name });
  });

  it('delete removes the job and its instances', async () => {
    await rpc(url, 'create', { name: 'doomed', schedule: YEARLY, target: http() });
    await rpc(url, 'run', { name: 'doomed' });
    expect((await rpc(url, 'delete', { name: 'doomed' })).body.result.name).toBe('doomed');
    expect((await rpc(url, 'delete', { name: 'doomed' })).body.error.code).toBe(NOT_FOUND);
    expect((await rpc(url, 'searchJobInstance', { jobName: 'doomed' })).body.rowsCount).toBe(0);
  });

  it('GraphQL twins and the jobInstanceChanged subscription', async () => {
    const created = await gql(url, 'mutation($i: CreateJobInput!) { createJob(input: $i) { name status target { kind http { url } } } }', {
      i: { name: 'gql.job', schedule: YEARLY, target: { http: { url: `${sink.url}/gql`, httpMethod: 'PUT', headers: { 'x-a': 'b' }, body: 'hi' } } },
    });
    expect(created.data).toEqual({ createJob: { name: 'gql.job', status: 'ENABLED', target: { kind: 'HTTP', http: { url: `${sink.url}/gql` } } } });
    const bad = await gql(url, 'mutation { createJob(input: {name: "x", schedule: "nope", target: {http: {url: "http://a"}}}) { name } }');
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'input.schedule' }] });
    expect((await gql(url, '{ job(name: "nope") { name } }')).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const list = await gql(url, '{ jobs(first: 2, filter: {status: ENABLED}, orderBy: NAME_DESC) { totalCount nodes { name } pageInfo { hasNextPage } } }');
    expect(list.data!.jobs.nodes).toHaveLength(2);

    const subscriptions = watchSubscriptions(t.gateway);
    const controller = new AbortController();
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { jobInstanceChanged(jobName: "gql.job") { id status trigger } }' }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await subscriptions.ready('jobInstance', 'gql.job');
    const run = await gql(url, 'mutation { runJob(name: "gql.job") { id status trigger } }');
    expect(run.data!.runJob).toMatchObject({ status: 'RUNNING', trigger: 'MANUAL' });
    let text = '';
    while (!text.includes('"status":"SUCCEEDED"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    // Each event carries the instance as read when it is sent: on a busy host the RUNNING one can already read
    // SUCCEEDED. What holds: the instance's events are RUNNING then SUCCEEDED, in that order, ending SUCCEEDED.
    const seen = [...text.matchAll(/"jobInstanceChanged":(\{[^}]*\})/g)].map((m) => JSON.parse(m[1]!) as { id: string; status: string; trigger: string });
    const statuses = seen.filter((e) => e.id === run.data!.runJob.id).map((e) => e.status);
    expect(statuses.at(-1)).toBe('SUCCEEDED');
    expect(statuses.every((status, i) => status === 'RUNNING' || (status === 'SUCCEEDED' && statuses.slice(i).every((later) => later === 'SUCCEEDED')))).toBe(true);
    expect(seen.every((e) => e.trigger === 'MANUAL')).toBe(true);
    const hit = sink.hits.find((h) => h.instanceId === run.data!.runJob.id)!;
    expect(hit).toMatchObject({ path: '/gql', body: 'hi' });
    const instances = await gql(url, '{ jobInstances(filter: {jobName: "gql.job", status: SUCCEEDED}) { totalCount nodes { id result } } }');
    expect(instances.data!.jobInstances).toMatchObject({ totalCount: 1, nodes: [{ id: run.data!.runJob.id, result: { httpStatus: 200 } }] });
    for (const m of ['pauseJob', 'resumeJob', 'deleteJob']) expect((await gql(url, `mutation { ${m}(name: "gql.job") { name } }`)).errors, m).toBeUndefined();
  });
});
