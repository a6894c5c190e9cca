import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/access/api-keys.js';
import { openDatabase } from '../src/db/client.js';
import { rpc } from './helpers/gateway.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.js';
import { startPgCluster, startPgReplica, type PgCluster } from './helpers/pg-cluster.js';
import { eventually, sleep, startSink, type Sink } from './helpers/sink.js';
import { startTaskSink, type TaskSink } from './helpers/task-sink.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';

// A failover where the old primary vanishes without a word, as operators meet it: a primary with a synchronous
// streaming replica (pg_basebackup -R), a TCP relay in front of it that the gateways reach PostgreSQL through, and
// three gateway processes with AUTH=on running tasks, webhook notifications and a cron job against real HTTP sinks.
// Then the relay goes silent on every open connection (nothing forwarded, nothing closed or reset: the host is gone,
// its packets dropped) and sends new connections to the replica, which is promoted 8 s later. Whatever loop had a
// statement in flight then waits on a server that will never answer; no statement_timeout can fire. Each process
// must find out by its own deadlines (the round deadline, the statement deadline), say which loop stalled on /readyz,
// and carry on against the new primary: tasks, notifications and cron within 60 s of the promotion, nothing
// acknowledged lost, no cron occurrence fired twice, and a SIGTERM, during the stall or after it, exits 0.

const TICK_JOB = 'failover-tick';

interface Readiness {
  at: number;
  status: number;
  failing: string[];
  workers: Record<string, string>;
}

describe('silent failover: the old primary vanishes, its replica is promoted', () => {
  let primary: PgCluster;
  let replica: PgCluster;
  let relay: TcpProxy;
  let taskSink: TaskSink;
  let cronSink: Sink;
  /** A: every timeout at its default. B: rounds abandoned after 4 s. C: stopped with SIGTERM during the stall. */
  let A: GatewayProcess;
  let B: GatewayProcess;
  let C: GatewayProcess;
  let urls: { A: string; B: string; C: string };
  let auth: Record<string, string>;

  beforeAll(async () => {
    primary = await startPgCluster();
    const directUrl = await primary.createDatabase('gateway');
    replica = await startPgReplica(primary);
    // Synchronous replication: a commit is acknowledged once the replica has it, so a failover loses nothing
    // acknowledged (the replica's own configuration, copied before this, names no standby: once promoted it commits alone).
    const admin = new pg.Client({ connectionString: primary.url() });
    await admin.connect();
    await admin.query(`ALTER SYSTEM SET synchronous_standby_names = '*'`);
    await admin.query('SELECT pg_reload_conf()');
    await eventually(async () => (await admin.query(`SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'`)).rowCount === 1, 20_000);
    await admin.end();

    relay = await startTcpProxy('127.0.0.1', primary.port);
    const relayed = new URL(directUrl);
    relayed.port = String(relay.port);
    [taskSink, cronSink] = await Promise.all([startTaskSink(), startSink()]);
    const env = { DATABASE_URL: relayed.toString(), AUTH: 'on', OUTBOUND_ALLOW: '127.0.0.1', CMS_WORKERS: '1', GRAPHIQL: 'off', CONSOLE: 'off' };
    A = startGatewayProcess(env);
    const a = await A.url; // applies the migrations
    B = startGatewayProcess({ ...env, WORKER_ROUND_DEADLINE_MS: '4000' });
    C = startGatewayProcess(env);
    urls = { A: a, B: await B.url, C: await C.url };

    const db = await openDatabase({ databaseUrl: directUrl, dataDir: 'unused' });
    const { key } = await createApiKey(db.prisma, { name: 'failover', scopes: ['admin:all'] });
    await db.close();
    auth = { authorization: `Bearer ${key}` };
    expect((await rpc(urls.A, 'createQueue', { name: 'work', rate: 50 }, {}, auth)).status).toBe(200);
    const job = await rpc(urls.B, 'create', { name: TICK_JOB, schedule: '* * * * * *', target: { http: { url: `${cronSink.url}/tick` } } }, {}, auth);
    expect(job.status, JSON.stringify(job.body)).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([A, B, C].map((g) => g?.stop()));
    await relay?.close();
    await Promise.all([taskSink?.close(), cronSink?.close()]);
    replica?.destroy();
    primary?.destroy();
  }, 60_000);

  it('tasks, notifications and cron carry on within 60 s of the promotion; /readyz names the stalled loops meanwhile; nothing acknowledged is lost; SIGTERM exits 0', async () => {
    // Work keeps arriving all along, on A and B alternately; what a gateway acknowledged must be done in the end.
    const acknowledged = { tasks: new Map<string, number>(), notifications: new Map<string, number>() };
    let producing = true;
    let sequence = 0;
    let inFlight = 0;
    const produce = async () => {
      const n = sequence++;
      const url = n % 2 ? urls.A : urls.B;
      inFlight += 1;
      try {
        const name = `t${n}`;
        const task = await rpc(url, 'createTask', { queueName: 'work', name, target: { url: `${taskSink.url}/task?ms=50` } }, {}, auth);
        if (task.status === 200) acknowledged.tasks.set(name, Date.now());
        const path = `/notify/n${n}`;
        const sent = await fetch(`${url}/v1/systems/failover/webhook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          body: JSON.stringify({ url: `${taskSink.url}${path}`, method: 'POST', body: { n } }),
        });
        if (sent.status === 200) acknowledged.notifications.set(path, Date.now());
      } catch {
        /* refused or cut while the database is away: not acknowledged */
      } finally {
        inFlight -= 1;
      }
    };
    const producer = (async () => {
      while (producing) {
        if (inFlight < 20) void produce();
        await sleep(250); // the pace of the workload
      }
    })();

    // Readiness of every process, sampled all along.
    const samples: Record<'A' | 'B' | 'C', Readiness[]> = { A: [], B: [], C: [] };
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        await Promise.all(
          (['A', 'B', 'C'] as const).map(async (name) => {
            const at = Date.now();
            const res = await fetch(`${urls[name]}/readyz`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
            if (!res) return;
            const body = (await res.json().catch(() => ({}))) as { failing?: string[]; checks?: { workers?: Record<string, string> } };
            samples[name].push({ at, status: res.status, failing: body.failing ?? [], workers: body.checks?.workers ?? {} });
          }),
        );
        await sleep(500); // the sampling interval
      }
    })();

    // Before: the work flows.
    await eventually(async () => taskSink.hits.some((h) => h.path === '/task') && taskSink.hits.some((h) => h.path.startsWith('/notify/')) && cronSink.hits.length > 2, 20_000);

    // The old primary vanishes; new connections reach the replica, which is promoted 8 s later.
    relay.retarget('127.0.0.1', replica.port);
    relay.blackhole();
    const vanishedAt = Date.now();

    // C is stopped while its loops wait on the silent connections: it exits 0 within its grace (10 s).
    await sleep(5000); // C's loops are stuck by now
    const cExit = new Promise<number | null>((resolve) => C.proc.once('exit', (code) => resolve(code)));
    const stopAskedAt = Date.now();
    C.proc.kill('SIGTERM');

    await sleep(Math.max(0, vanishedAt + 8000 - Date.now())); // how long the failover takes to decide, as an orchestrator would
    replica.promote();
    const promotedAt = Date.now();
    const cCode = await cExit;
    expect(cCode, JSON.stringify(C.logLines.slice(-10).map((l) => l.msg))).toBe(0);
    expect(Date.now() - stopAskedAt).toBeLessThan(11_000);

    // After: work created after the promotion is done, and the cron job fires occurrences after it, within 60 s.
    const after = (at: number) => at > promotedAt;
    const taskResumedAt = await eventually(async () => {
      const hit = taskSink.hits.find((h) => h.path === '/task' && after(acknowledged.tasks.get(h.task) ?? 0));
      return hit?.start;
    }, 60_000, 200);
    const notificationResumedAt = await eventually(async () => {
      const hit = taskSink.hits.find((h) => h.path.startsWith('/notify/') && after(acknowledged.notifications.get(h.path) ?? 0));
      return hit?.start;
    }, 60_000, 200);
    const cronResumedAt = await eventually(async () => cronSink.hits.find((h) => Date.parse(h.scheduleTime) > promotedAt)?.at, 60_000, 200);
    for (const resumed of [taskResumedAt, notificationResumedAt, cronResumedAt]) expect(resumed - promotedAt).toBeLessThan(60_000);

    // Both remaining processes are ready again.
    await eventually(async () => (['A', 'B'] as const).every((name) => samples[name].some((s) => s.at > cronResumedAt && s.status === 200)), 30_000);
    producing = false;
    await producer;
    await eventually(async () => inFlight === 0, 15_000);

    // Nothing acknowledged is lost: every task and notification a gateway answered 200 for reaches its sink.
    await eventually(
      async () => [...acknowledged.tasks.keys()].every((name) => taskSink.hits.some((h) => h.task === name && h.status === 200)),
      60_000,
      500,
    );
    await eventually(async () => [...acknowledged.notifications.keys()].every((path) => taskSink.hits.some((h) => h.path === path)), 60_000, 500);
    // That is work acknowledged before the old primary vanished (replicated before it was acknowledged) and after.
    for (const times of [acknowledged.tasks.values(), acknowledged.notifications.values()]) {
      const all = [...times];
      expect(all.some((at) => at < vanishedAt)).toBe(true);
      expect(all.some(after)).toBe(true);
    }
    // Each cron occurrence reached its target once at most.
    const occurrences = cronSink.hits.map((h) => h.scheduleTime);
    expect(new Set(occurrences).size).toBe(occurrences.length);
    watching = false;
    await watcher;

    // Meanwhile /readyz said which loops were in trouble: B's rounds were abandoned at their 4 s deadline, and while
    // the new server was still a read-only replica no round could complete: "stalled", named in `failing`. A's, at
    // the default deadline (10 s), came just after the promotion: its logs say so.
    const beforePromotion = samples.B.filter((s) => s.at > vanishedAt + 5000 && s.at < promotedAt);
    const stalledOnB = beforePromotion.flatMap((s) => Object.entries(s.workers).filter(([, state]) => state === 'stalled').map(([loop]) => loop));
    expect(stalledOnB.length, JSON.stringify(beforePromotion)).toBeGreaterThan(0);
    expect(beforePromotion.some((s) => s.status === 503 && s.failing.includes(`worker:${stalledOnB[0]}`))).toBe(true);
    const said = (p: GatewayProcess, pattern: RegExp) => p.logLines.some((l) => typeof l.msg === 'string' && pattern.test(l.msg));
    expect(said(B, /stalled: a round did not finish within 4000 ms/)).toBe(true);
    expect(said(B, / recovered$/)).toBe(true);
    expect(said(A, /stalled: a round did not finish within 10000 ms/) || said(A, /got no answer from the database in time/)).toBe(true);
    expect(said(A, / recovered$/)).toBe(true);

    // A SIGTERM after the failover exits 0 as well.
    for (const p of [A, B]) {
      const exited = new Promise<number | null>((resolve) => p.proc.once('exit', (code) => resolve(code)));
      p.proc.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 150_000);
});
