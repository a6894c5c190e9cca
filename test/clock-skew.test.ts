import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { rpc } from './helpers/gateway.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.js';
import { eventually, sleep, startSink, type Sink } from './helpers/sink.js';
import { startTaskSink, type TaskSink } from './helpers/task-sink.js';

// One clock, the database's. Two gateway processes share a PostgreSQL database; their hosts' clocks are off: one runs
// 120 s ahead (it fires the cron jobs), the other 120 s behind (it creates them). Before, the one ahead fired each
// occurrence 120 s before its time, and delayed every task and notification it accepted by 120 s (their "now" was in
// the database's future). Now nothing fires early, nothing accepted waits for a clock, each process says its clock is
// off and /metrics shows by how much.

const SHIFT_MS = 120_000;
const SHIFT_CLOCK = resolve(import.meta.dirname, 'helpers/shift-clock.mjs');

describe('processes whose clocks are off by 120 s (PostgreSQL)', () => {
  let db: FreshDatabase;
  let cronSink: Sink;
  let taskSink: TaskSink;
  let ahead: GatewayProcess;
  let behind: GatewayProcess;
  let urls: { ahead: string; behind: string };

  beforeAll(async () => {
    db = await freshDatabase('postgres');
    [cronSink, taskSink] = await Promise.all([startSink(), startTaskSink()]);
    const skewed = (shiftMs: number, env: Record<string, string>) =>
      startGatewayProcess({ ...db.env, TEST_CLOCK_SHIFT_MS: String(shiftMs), CMS_WORKERS: '1', CONSOLE: 'off', TASK_POLL_MS: '60000', ...env }, { nodeArgs: ['--import', SHIFT_CLOCK] });
    ahead = skewed(SHIFT_MS, {});
    const aheadUrl = await ahead.url; // migrates
    behind = skewed(-SHIFT_MS, { SCHEDULER: 'off', TASK_DISPATCHER: 'off', DELIVERY_WORKER: 'off' });
    urls = { ahead: aheadUrl, behind: await behind.url };
  }, 90_000);

  afterAll(async () => {
    await Promise.all([ahead?.stop(), behind?.stop()]);
    await Promise.all([cronSink?.close(), taskSink?.close()]);
    await db?.drop();
  }, 30_000);

  it('fires no cron occurrence early (nor one from before the job existed), runs what it accepts at once, warns, and shows the offset on /metrics', async () => {
    // Created on the process that runs behind: its first occurrence is the database's next, not one 120 s ago.
    const createdAt = Date.now();
    const job = await rpc(urls.behind, 'create', { name: 'skewed', schedule: '* * * * * *', target: { http: { url: `${cronSink.url}/tick` } } });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    const firstRun = Date.parse(job.body.result.nextRunTime);
    expect(firstRun).toBeGreaterThan(createdAt - 1000);
    expect(firstRun).toBeLessThanOrEqual(createdAt + 2500);

    // Accepted by the process that runs ahead: a task and a notification run at once, not when its clock says "now".
    await rpc(urls.ahead, 'createQueue', { name: 'skewed', rate: 5 });
    const taskAt = Date.now();
    expect((await rpc(urls.ahead, 'createTask', { queueName: 'skewed', name: 'now', target: { url: `${taskSink.url}/ok` } })).status).toBe(200);
    const sentAt = Date.now();
    const sent = await fetch(`${urls.ahead}/v1/systems/skewed/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${taskSink.url}/notify`, method: 'POST', body: { hello: 1 } }),
    });
    expect(sent.status).toBe(200);
    const taskHit = await eventually(async () => taskSink.hits.find((h) => h.task === 'now'), 10_000);
    expect(taskHit.start - taskAt).toBeLessThan(5000);
    const notificationHit = await eventually(async () => taskSink.hits.find((h) => h.path === '/notify'), 10_000);
    expect(notificationHit.start - sentAt).toBeLessThan(5000);

    // The process ahead fires every occurrence, none before its time (the sink's clock is the machine's).
    await eventually(async () => cronSink.hits.length >= 6, 15_000);
    await sleep(1000); // a few more occurrences
    const hits = cronSink.hits.filter((h) => h.jobName === 'skewed');
    for (const hit of hits) {
      const scheduled = Date.parse(hit.scheduleTime);
      expect(hit.at, hit.scheduleTime).toBeGreaterThanOrEqual(scheduled);
      expect(hit.at - scheduled, hit.scheduleTime).toBeLessThan(5000);
      expect(scheduled).toBeGreaterThanOrEqual(firstRun);
    }
    expect(new Set(hits.map((h) => h.scheduleTime)).size).toBe(hits.length);

    // Each process says so, once, at start, and shows the offset.
    const warnings = (p: GatewayProcess) => p.logLines.filter((l) => typeof l.msg === 'string' && l.msg.includes("clock is 120.0 s") && l.level === 40);
    expect(warnings(ahead).map((l) => l.msg)).toEqual([expect.stringContaining('ahead of the database')]);
    expect(warnings(behind).map((l) => l.msg)).toEqual([expect.stringContaining('behind the database')]);
    for (const [url, sign] of [[urls.ahead, 1], [urls.behind, -1]] as const) {
      const metrics = await (await fetch(`${url}/metrics`)).text();
      const offset = Number(/^gateway_clock_offset_seconds (\S+)$/m.exec(metrics)?.[1]);
      expect(Math.abs(offset - sign * 120)).toBeLessThan(1);
    }
  }, 60_000);
});
