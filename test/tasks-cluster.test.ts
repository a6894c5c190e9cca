import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { rpc } from './helpers/gateway.js';
import { startGatewayProcesses, type GatewayProcess } from './helpers/process.js';
import { eventually } from './helpers/sink.js';
import { startTaskSink, type TaskSink } from './helpers/task-sink.js';

// Two gateway processes on one PostgreSQL database. Each process may run only 2 tasks at once (TASK_CONCURRENCY, both
// of one queue: TASK_QUEUE_CONCURRENCY), so a queue of rate 3 reaching 3 concurrent requests proves both processes
// ran its tasks, and never exceeding 3
// proves the rate is counted across them. Then the process running a task is SIGKILLed: the other runs it again
// once the 2 s lease has expired, and nothing else is lost.

describe('tasks across two gateway processes (PostgreSQL)', () => {
  let db: FreshDatabase;
  let sink: TaskSink;
  let children: GatewayProcess[] = [];
  let urls: string[] = [];
  const env = () => ({ ...db.env, TASK_CONCURRENCY: '2', TASK_QUEUE_CONCURRENCY: '2', TASK_LEASE_SECONDS: '2', SCHEDULER: 'off', DELIVERY_WORKER: 'off' });

  beforeAll(async () => {
    sink = await startTaskSink();
    db = await freshDatabase('postgres');
    ({ children, urls } = await startGatewayProcesses(2, env()));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await sink?.close();
    await db?.drop();
  }, 30_000);

  it('holds a queue rate of 3 in total with 30 tasks, and reaches it', async () => {
    const [a, b] = urls as [string, string];
    await rpc(a, 'createQueue', { name: 'shared', rate: 3 });
    await rpc(a, 'pauseQueue', { name: 'shared' });
    for (let i = 0; i < 30; i++) {
      const created = await rpc(i % 2 ? a : b, 'createTask', { queueName: 'shared', name: `s${i}`, target: { url: `${sink.url}/work?ms=120` } });
      expect(created.body.result?.status, JSON.stringify(created.body)).toBe('READY');
    }
    sink.resetMax();
    await rpc(b, 'resumeQueue', { name: 'shared' });
    await eventually(async () => (await rpc(a, 'getTasksSummary', { queueName: 'shared' })).body.result.SUCCEEDED === 30, 30_000);
    expect(sink.maxConcurrent).toBe(3);
    const hits = sink.hits.filter((h) => h.queue === 'shared');
    expect(hits).toHaveLength(30);
    expect(new Set(hits.map((h) => h.task)).size).toBe(30);
  }, 60_000);

  it('a task whose process is SIGKILLed mid-run completes in the other process, with exactly one successful run', async () => {
    const [a] = urls as [string, string];
    await rpc(a, 'createQueue', { name: 'crash', rate: 1 });
    await rpc(a, 'createTask', { queueName: 'crash', name: 'victim', target: { url: `${sink.url}/hold` } });
    for (let i = 0; i < 10; i++) await rpc(a, 'createTask', { queueName: 'crash', name: `after${i}`, target: { url: `${sink.url}/work` } });
    await eventually(async () => sink.hits.some((h) => h.task === 'victim'));

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ lockedBy: string }>(`SELECT "lockedBy" FROM "Task" WHERE name = 'victim'`);
      const pid = Number(rows[0]!.lockedBy.split(':')[1]);
      const holder = children.findIndex((c) => c.proc.pid === pid);
      expect(holder).toBeGreaterThanOrEqual(0);
      const survivor = urls[1 - holder]!;
      const exited = new Promise((r) => children[holder]!.proc.once('exit', r));
      process.kill(pid, 'SIGKILL');
      await exited;
      // The peer must have seen the dead process's connection close before it answers held requests; otherwise its
      // 200 goes to a dead socket and counts as a second successful run.
      await eventually(async () => sink.current === 0);
      sink.release(); // the next attempt is answered at once

      await eventually(async () => (await rpc(survivor, 'getTasksSummary', { queueName: 'crash' })).body.result.SUCCEEDED === 11, 20_000);
      const victim = (await rpc(survivor, 'getTask', { queueName: 'crash', name: 'victim' })).body.result;
      expect(victim).toMatchObject({ status: 'SUCCEEDED', attempts: 2, result: { statusCode: 200 } });
      const runs = sink.hits.filter((h) => h.task === 'victim');
      expect(runs.map((h) => h.attempt)).toEqual([1, 2]);
      expect(runs.filter((h) => h.status === 200)).toHaveLength(1);
      for (let i = 0; i < 10; i++) expect(sink.hits.filter((h) => h.task === `after${i}`)).toHaveLength(1);
      const leases = await client.query(`SELECT count(*)::int AS n FROM "Task" WHERE "lockedBy" IS NOT NULL OR status = 'RUNNING'`);
      expect(leases.rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  }, 60_000);
});
