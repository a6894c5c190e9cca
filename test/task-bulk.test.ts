import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { eventually } from './helpers/sink.js';
import { startTaskSink, type TaskSink } from './helpers/task-sink.js';
import { BULK_TASK_LIMIT } from '../src/tasks/task-rules.js';

// Acting on failures across queues (issue 46): the failures list (status, error text, end time, name substring,
// across queues, newest end first), the bulk actions retryTasks / cancelTasks / purgeTasks by list or filter (bounded,
// scope-checked, logged, a refusal changes nothing), runTaskNow for a task waiting on its schedule or a backoff, and
// resendNotification for a FAILED unit (the delivery worker off: the unit stays as the resend leaves it). A real gateway with AUTH=on, a real dispatcher and HTTP sink, both databases.

const BULK = 'action matched changed more tasks { queueName name }';

describe.each(DATABASES)('acting on failures on %s', (kind) => {
  let t: TestGateway;
  let sink: TaskSink;
  let admin: Record<string, string>;
  let reader: Record<string, string>;
  const logged: Record<string, unknown>[] = [];
  const call = async (query: string, variables: Record<string, unknown> = {}, as = admin) => gql(t.url, query, variables, as);
  const ok = async (query: string, variables: Record<string, unknown> = {}) => {
    const answer = await call(query, variables);
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    return answer.data as Record<string, any>;
  };
  const db = () => t.gateway.services.db;
  /** Tasks of a paused queue (nothing runs them), moved straight to an end status as the dispatcher leaves them. */
  const seed = async (queueName: string, tasks: { name: string; status: 'FAILED' | 'SUCCEEDED' | 'CANCELLED' | 'READY' | 'BLOCKED'; error?: string; endedMinutesAgo?: number; dependsOn?: string[] }[]) => {
    await rpc(t.url, 'createQueue', { name: queueName }, {}, admin);
    await rpc(t.url, 'pauseQueue', { name: queueName }, {}, admin);
    for (const task of tasks) {
      const created = await rpc(t.url, 'createTask', { queueName, name: task.name, target: { url: `${sink.url}/ok` }, ...(task.dependsOn && { dependsOn: task.dependsOn }) }, {}, admin);
      expect(created.body.error).toBeUndefined();
      const ended = task.status === 'FAILED' || task.status === 'SUCCEEDED' || task.status === 'CANCELLED';
      if (task.status !== 'READY' && !(task.status === 'BLOCKED' && task.dependsOn)) {
        await db().task.update({
          where: { queueName_name: { queueName, name: task.name } },
          data: { status: task.status, lastError: task.error ?? null, attempts: task.status === 'FAILED' ? 3 : 0, ...(ended && { finishTime: new Date(Date.now() - (task.endedMinutesAgo ?? 0) * 60_000) }) },
        });
      }
    }
  };
  const statuses = async (queueName: string) =>
    Object.fromEntries((await db().task.findMany({ where: { queueName }, select: { name: true, status: true } })).map((x) => [x.name, x.status]));

  beforeAll(async () => {
    sink = await startTaskSink();
    const lines = new Writable({ write: (chunk: Buffer, _e, done) => (logged.push(JSON.parse(chunk.toString())), done()) });
    t = await startTestGateway(kind, { AUTH: 'on', RATE_LIMIT_PER_MINUTE: '0', TASK_POLL_MS: '200', DELIVERY_WORKER: 'off' }, { log: pino({ level: 'info' }, lines) });
    admin = bearer(await makeKey(t, ['admin:all']));
    reader = bearer(await makeKey(t, ['tasks:read', 'queues:read']));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  it('lists failures across queues by error text, end time and name substring, most recently ended first', async () => {
    await seed('mail', [
      { name: 'send-1', status: 'FAILED', error: 'HTTP 503 from target', endedMinutesAgo: 5 },
      { name: 'send-2', status: 'FAILED', error: 'Connect Timeout after 30 s', endedMinutesAgo: 1 },
      { name: 'send-3', status: 'SUCCEEDED', endedMinutesAgo: 2 },
      { name: 'odd_name.1', status: 'FAILED', error: 'timeout', endedMinutesAgo: 90 },
    ]);
    await seed('bills', [{ name: 'Report-Send', status: 'FAILED', error: 'TIMEOUT reading answer', endedMinutesAgo: 3 }]);
    const list = async (filter: Record<string, unknown>) =>
      (await ok('query($f: TaskFilter) { tasks(filter: $f, orderBy: FINISH_TIME_DESC, first: 50) { totalCount nodes { queueName name } } }', { f: filter })).tasks as {
        totalCount: number;
        nodes: { queueName: string; name: string }[];
      };
    const names = (page: { nodes: { queueName: string; name: string }[] }) => page.nodes.map((n) => `${n.queueName}/${n.name}`);

    expect(names(await list({ status: 'FAILED' }))).toEqual(['mail/send-2', 'bills/Report-Send', 'mail/send-1', 'mail/odd_name.1']);
    expect(names(await list({ status: 'FAILED', errorContains: 'timeout' }))).toEqual(['mail/send-2', 'bills/Report-Send', 'mail/odd_name.1']);
    const hourAgo = new Date(Date.now() - 60 * 60_000).toISOString();
    const twoMinutesAgo = new Date(Date.now() - 2 * 60_000 + 10_000).toISOString();
    expect(names(await list({ status: 'FAILED', finishedAfter: hourAgo, finishedBefore: twoMinutesAgo }))).toEqual(['bills/Report-Send', 'mail/send-1']);
    // Substring in any case, across queues; `%` and `_` are text, not wildcards.
    expect(names(await list({ nameContains: 'SEND' })).sort()).toEqual(['bills/Report-Send', 'mail/send-1', 'mail/send-2', 'mail/send-3']);
    expect(names(await list({ nameContains: 'D_NAME' }))).toEqual(['mail/odd_name.1']);
    expect((await list({ nameContains: 'o_d' })).totalCount).toBe(0);
    expect((await list({ nameContains: 'send%' })).totalCount).toBe(0);

    const refused = await call('query { tasks(filter: { nameContains: "" }) { totalCount } }');
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    // The legacy search keeps the spec's four conditions.
    const legacy = await rpc(t.url, 'searchTasks', { nameContains: 'send' }, {}, admin);
    expect(legacy.body.error).toBeDefined();
  });

  it('a trigram index serves substring search of names and errors (the plan with sequential scans ruled out)', async () => {
    const plan = async (where: string) =>
      db().$transaction(async (tx) => {
        await tx.$executeRawUnsafe('SET LOCAL enable_seqscan = off');
        const rows = await tx.$queryRawUnsafe<Record<string, string>[]>(`EXPLAIN SELECT id FROM "Task" WHERE ${where}`);
        return rows.map((r) => Object.values(r)[0]).join('\n');
      });
    expect(await plan(`name ILIKE '%report%'`)).toContain('Task_name_trgm_idx');
    expect(await plan(`"lastError" ILIKE '%timeout%'`)).toContain('Task_lastError_trgm_idx');
  });

  it('retries FAILED tasks by filter a bounded batch at a time, then by list; other statuses are left alone', async () => {
    await seed('retry', [
      ...Array.from({ length: 5 }, (_, i) => ({ name: `f${i}`, status: 'FAILED' as const, error: i < 4 ? 'HTTP 500' : 'refused' })),
      { name: 'done', status: 'SUCCEEDED' },
    ]);
    const retry = (select: Record<string, unknown>) => ok(`mutation($s: TaskSelection!) { retryTasks(select: $s) { ${BULK} } }`, { s: select });
    const first = (await retry({ filter: { queueName: 'retry', errorContains: 'http 500' }, atMost: 3 })).retryTasks;
    expect(first).toMatchObject({ action: 'RETRY', matched: 3, changed: 3, more: true });
    const second = (await retry({ filter: { queueName: 'retry', errorContains: 'http 500' }, atMost: 3 })).retryTasks;
    expect(second).toMatchObject({ matched: 1, changed: 1, more: false });
    expect([...first.tasks, ...second.tasks].map((k: { name: string }) => k.name).sort()).toEqual(['f0', 'f1', 'f2', 'f3']);
    const after = await db().task.findMany({ where: { queueName: 'retry', name: { in: ['f0', 'f1', 'f2', 'f3'] } } });
    expect(after.every((x) => x.status === 'READY' && x.attempts === 0 && x.finishTime === null)).toBe(true);

    const byList = (await retry({ keys: [{ queueName: 'retry', name: 'f4' }, { queueName: 'retry', name: 'done' }, { queueName: 'retry', name: 'f0' }] })).retryTasks;
    expect(byList).toMatchObject({ matched: 1, changed: 1, more: false, tasks: [{ queueName: 'retry', name: 'f4' }] });
    expect(await statuses('retry')).toMatchObject({ f4: 'READY', done: 'SUCCEEDED' });

    const line = logged.find((l) => l.action === 'retry' && l.changed === 1 && (l.selection as { keys?: number }).keys === 3);
    expect(line).toMatchObject({ caller: 'test admin:all', matched: 1, more: false });
  });

  it('cancels waiting tasks and purges ended ones, never one a waiting task depends on', async () => {
    await seed('sweep', [
      { name: 'base', status: 'FAILED', error: 'x' },
      { name: 'needs-base', status: 'BLOCKED', dependsOn: ['base'] },
      { name: 'ready', status: 'READY' },
      { name: 'old-1', status: 'SUCCEEDED' },
      { name: 'old-2', status: 'CANCELLED' },
      { name: 'old-3', status: 'FAILED', error: 'y' },
    ]);
    const purged = (await ok(`mutation { purgeTasks(select: { filter: { queueName: "sweep" } }) { ${BULK} } }`)).purgeTasks;
    // base is FAILED (may be purged) but needs-base still waits for it.
    expect(purged).toMatchObject({ action: 'PURGE', matched: 4, changed: 3, more: false });
    expect(await statuses('sweep')).toEqual({ base: 'FAILED', 'needs-base': 'BLOCKED', ready: 'READY' });

    const cancelled = (await ok(`mutation { cancelTasks(select: { filter: { queueName: "sweep" } }) { ${BULK} } }`)).cancelTasks;
    expect(cancelled).toMatchObject({ action: 'CANCEL', matched: 2, changed: 2 });
    expect(await statuses('sweep')).toEqual({ base: 'FAILED', 'needs-base': 'CANCELLED', ready: 'CANCELLED' });
    // Once nothing waits for it, base goes too.
    expect((await ok(`mutation { purgeTasks(select: { keys: [{ queueName: "sweep", name: "base" }] }) { ${BULK} } }`)).purgeTasks).toMatchObject({ changed: 1 });
  });

  it('refuses a caller without tasks:write and a bad selection, changing nothing', async () => {
    await seed('guarded', [{ name: 'g1', status: 'FAILED', error: 'x' }]);
    const forbidden = await call('mutation { retryTasks(select: { filter: { queueName: "guarded" } }) { changed } }', {}, reader);
    expect(forbidden.status).toBe(403);
    expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', requiredScopes: ['tasks:write'] });
    for (const select of [
      '{ }',
      '{ keys: [{ queueName: "guarded", name: "g1" }], filter: { queueName: "guarded" } }',
      '{ filter: { queueName: "guarded" }, atMost: 0 }',
      `{ filter: { queueName: "guarded" }, atMost: ${BULK_TASK_LIMIT + 1} }`,
      '{ keys: [] }',
      '{ keys: [{ queueName: "guarded", name: "bad name!" }] }',
    ]) {
      const refused = await call(`mutation { purgeTasks(select: ${select}) { changed } }`);
      expect(refused.errors?.[0]?.extensions, select).toMatchObject({ code: 'BAD_USER_INPUT' });
    }
    expect(await statuses('guarded')).toEqual({ g1: 'FAILED' });
  });

  it('runTaskNow runs a task waiting on its schedule or its backoff, and refuses one waiting for dependencies', async () => {
    await rpc(t.url, 'createQueue', { name: 'now' }, {}, admin);
    const run = (name: string) => call('mutation($n: String!) { runTaskNow(queueName: "now", name: $n) { status } }', { n: name });
    const statusOf = async (name: string) => (await db().task.findUniqueOrThrow({ where: { queueName_name: { queueName: 'now', name } } })).status;

    const later = new Date(Date.now() + 3_600_000).toISOString();
    await rpc(t.url, 'createTask', { queueName: 'now', name: 'scheduled', target: { url: `${sink.url}/ok` }, scheduleTime: later }, {}, admin);
    expect(await statusOf('scheduled')).toBe('BLOCKED');
    const ran = await run('scheduled');
    expect(ran.errors).toBeUndefined();
    expect(ran.data?.runTaskNow).toMatchObject({ status: 'READY' });
    await eventually(async () => (await statusOf('scheduled')) === 'SUCCEEDED');

    // A retry waiting out a one-hour backoff runs its next attempt now.
    await rpc(t.url, 'createTask', { queueName: 'now', name: 'backoff', target: { url: `${sink.url}/x?failUntil=2` }, maxAttempts: 3, minBackoffMs: 3_600_000, maxBackoffMs: 3_600_000 }, {}, admin);
    await eventually(async () => {
      const task = await db().task.findUniqueOrThrow({ where: { queueName_name: { queueName: 'now', name: 'backoff' } } });
      return task.status === 'READY' && task.attempts === 1;
    });
    expect((await run('backoff')).errors).toBeUndefined();
    await eventually(async () => (await statusOf('backoff')) === 'SUCCEEDED');

    await rpc(t.url, 'pauseQueue', { name: 'now' }, {}, admin);
    await rpc(t.url, 'createTask', { queueName: 'now', name: 'first', target: { url: `${sink.url}/ok` } }, {}, admin);
    await rpc(t.url, 'createTask', { queueName: 'now', name: 'second', target: { url: `${sink.url}/ok` }, dependsOn: ['first'] }, {}, admin);
    const waits = await run('second');
    expect(waits.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT' });
    expect(waits.errors?.[0]?.message).toContain('waits for its dependencies');
    expect(await statusOf('second')).toBe('BLOCKED');
    const ended = await run('scheduled');
    expect(ended.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT' });
    expect(ended.errors?.[0]?.message).toContain('is SUCCEEDED');
    expect((await run('missing')).errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('failed notification units are found by error text and by when they failed', async () => {
    const failedUnit = (lastError: string, minutesAgo: number) =>
      db().notification.create({
        data: { incomingId: crypto.randomUUID(), systemId: 'found', channel: 'sms', type: 'sms', recipient: '+7', payload: {}, status: 'FAILED', lastError, updateTime: new Date(Date.now() - minutesAgo * 60_000) },
      });
    const smsc = await failedUnit('SMSC refused: throttled', 5);
    const old = await failedUnit('smsc timeout', 120);
    await failedUnit('bot token revoked', 1);
    const found = async (filter: Record<string, unknown>) =>
      ((await ok('query($f: NotificationFilter) { notifications(filter: $f, first: 50) { nodes { id } } }', { f: { systemId: 'found', status: 'FAILED', ...filter } })).notifications.nodes as { id: string }[]).map((n) => n.id).sort();
    expect(await found({ errorContains: 'SMSC' })).toEqual([smsc.id, old.id].sort());
    expect(await found({ errorContains: 'smsc', updatedAfter: new Date(Date.now() - 60 * 60_000).toISOString() })).toEqual([smsc.id]);
    expect(await found({ errorContains: '%' })).toEqual([]);
    const refused = await call('query { notifications(filter: { errorContains: "" }) { totalCount } }');
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('resendNotification sends a FAILED unit again and refuses any other', async () => {
    const unit = await db().notification.create({
      data: { incomingId: crypto.randomUUID(), systemId: 'sys', channel: 'sms', type: 'sms', recipient: '+70000000000', payload: {}, status: 'FAILED', attempts: 8, lastError: 'SMSC refused', availableAt: new Date(Date.now() + 3_600_000) },
    });
    const resend = (id: string) => call(`mutation($id: ID!) { resendNotification(id: $id) { id status attempts lastError } }`, { id });
    const again = await resend(unit.id);
    expect(again.errors).toBeUndefined();
    expect(again.data?.resendNotification).toMatchObject({ id: unit.id, status: 'PENDING', attempts: 0, lastError: null });
    const stored = await db().notification.findUniqueOrThrow({ where: { id: unit.id } });
    expect(stored.availableAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);

    const delivered = await db().notification.create({ data: { incomingId: crypto.randomUUID(), systemId: 'sys', channel: 'sms', type: 'sms', recipient: '+7', payload: {}, status: 'DELIVERED' } });
    const refused = await resend(delivered.id);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT' });
    expect((await db().notification.findUniqueOrThrow({ where: { id: delivered.id } })).status).toBe('DELIVERED');
    expect((await resend(crypto.randomUUID())).errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect((await resend('not-a-uuid')).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});
