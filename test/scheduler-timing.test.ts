import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { rpc } from './helpers/gateway.js';
import { startSchedulerGateway, YEARLY, type SchedulerGateway } from './helpers/scheduler-gateway.js';
import { eventually, sleep, type Sink } from './helpers/sink.js';

// When the scheduler acts: a job due every second fires, stops while paused and fires again once resumed (its next
// run within the next second), and an attempt that outlives its timeout fails in time. Alone in its run
// (vitest.config.ts): these are bounds on time. The rest of the scheduler runs beside other files (scheduler.test.ts).

describe.each(DATABASES)('job scheduler on %s', (kind) => {
  let g: SchedulerGateway;
  let url: string;
  let sink: Sink;
  const http = (path?: string) => g.http(path);

  beforeAll(async () => {
    g = await startSchedulerGateway(kind);
    ({ url, sink } = g);
  });
  afterAll(() => g?.close());

  it('fires every second; pause (params or result) stops it; resume restarts it with a correct nextRunTime; run works while paused', async () => {
    await rpc(url, 'create', { name: 'tick', schedule: '* * * * * *', target: http('/tick') });
    const hitsOf = () => sink.hits.filter((h) => h.jobName === 'tick' && h.path === '/tick');
    await eventually(async () => hitsOf().length >= 2);
    const paused = await rpc(url, 'pause', undefined, { result: { name: 'tick' } });
    expect(paused.body.result).toMatchObject({ name: 'tick', status: 'PAUSED', nextRunTime: null });
    expect((await rpc(url, 'pause', { name: 'tick' })).body.result.status).toBe('PAUSED');
    // A tick fired before the pause may still be calling its target: it is RUNNING until the sink has answered.
    await eventually(async () => (await rpc(url, 'searchJobInstance', { jobName: 'tick', status: 'RUNNING' })).body.result?.length === 0, 8000, 20);
    const count = hitsOf().filter((h) => h.attempt === 1).length;
    await sleep(2200); // kept: that nothing fires for two seconds while paused is what is checked
    expect(hitsOf().length).toBe(count);
    const run = await rpc(url, 'run', { name: 'tick' });
    expect(run.body.result).toMatchObject({ jobName: 'tick', trigger: 'MANUAL', status: 'RUNNING', misfire: null });
    const done = await eventually(async () => {
      const r = await rpc(url, 'searchJobInstance', { jobName: 'tick', trigger: 'MANUAL' });
      return r.body.result[0]?.status === 'SUCCEEDED' && r.body.result[0];
    });
    expect(done).toMatchObject({ id: run.body.result.id, attempts: 1, result: { httpStatus: 200, body: 'ok' }, error: null });
    expect(hitsOf().some((h) => h.instanceId === run.body.result.id)).toBe(true);
    const resumedAt = Date.now();
    const resumed = await rpc(url, 'resume', { name: 'tick' });
    expect(resumed.body.result.status).toBe('ENABLED');
    const next = Date.parse(resumed.body.result.nextRunTime);
    expect(next).toBeGreaterThan(resumedAt - 5);
    expect(next).toBeLessThanOrEqual(resumedAt + 1100);
    expect(next % 1000).toBe(0);
    const seen = hitsOf().length;
    await eventually(async () => hitsOf().length >= seen + 2);
    const scheduled = await rpc(url, 'searchJobInstance', { jobName: 'tick', trigger: 'SCHEDULE', pageSize: 500 });
    const times = scheduled.body.result.map((i: { scheduledTime: string }) => i.scheduledTime);
    expect(new Set(times).size).toBe(times.length);
    expect(scheduled.body.result.some((i: { scheduledTime: string }) => Date.parse(i.scheduledTime) > resumedAt)).toBe(true);
    await rpc(url, 'pause', { name: 'tick' });
  });

  it('an attempt that outlives timeoutSeconds fails with a clear error', async () => {
    await rpc(url, 'create', { name: 'slowpoke', schedule: YEARLY, target: http('/slow'), timeoutSeconds: 1 });
    const run = await rpc(url, 'run', { name: 'slowpoke' });
    const failed = await eventually(async () => (await rpc(url, 'searchJobInstance', { jobName: 'slowpoke', status: 'FAILED' })).body.result[0]);
    expect(failed).toMatchObject({ id: run.body.result.id, attempts: 1, error: `no answer from ${sink.url}/slow within 1 s` });
    expect(Date.parse(failed.finishTime) - Date.parse(failed.startTime)).toBeLessThan(1900);
  });
});
