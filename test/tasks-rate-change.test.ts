import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { rpc } from './helpers/gateway.js';
import { eventually, sleep } from './helpers/sink.js';
import { startTasksGateway, taskCalls, type TasksGateway } from './helpers/tasks-gateway.js';
import type { TaskSink } from './helpers/task-sink.js';

// A queue's status and rate as the dispatcher obeys them: a pause or a CLOSE starts nothing, and a rate raised while
// tasks wait starts them at once. Alone in its run (vitest.config.ts): "at once" is a bound on time. The rest of the
// tasks area runs beside other files (tasks.test.ts).

describe.each(DATABASES)('tasks on %s', (kind) => {
  let g: TasksGateway;
  let url: string;
  let sink: TaskSink;
  const { target, create, statusOf, summary } = taskCalls(() => g);

  beforeAll(async () => {
    g = await startTasksGateway(kind);
    ({ url, sink } = g);
  }, 60_000);
  afterAll(() => g?.close());

  it('pause stops new starts while running ones finish; resume restarts; changeQueueRate applies at once; CLOSE starts nothing', async () => {
    await rpc(url, 'createQueue', { name: 'pausing', rate: 1 });
    await create('pausing', 'p1', { target: target('/slow', { url: `${sink.url}/slow?ms=600` }) });
    await create('pausing', 'p2');
    await eventually(async () => (await statusOf('pausing', 'p1')) === 'RUNNING');
    expect((await rpc(url, 'pauseQueue', { name: 'pausing' })).body.result.paused).toBe(true);
    await eventually(async () => (await statusOf('pausing', 'p1')) === 'SUCCEEDED');
    await sleep(300); // kept: time for a wrongful start of p2 in the paused queue to show
    expect(await statusOf('pausing', 'p2')).toBe('READY');
    await rpc(url, 'resumeQueue', { name: 'pausing' });
    await eventually(async () => (await statusOf('pausing', 'p2')) === 'SUCCEEDED');

    // rate 1 -> 4 while tasks wait: four run together at once.
    await rpc(url, 'createQueue', { name: 'widening', rate: 1 });
    for (let i = 0; i < 4; i++) await create('widening', `w${i}`, { target: target('/slow', { url: `${sink.url}/slow?ms=800` }) });
    await eventually(async () => (await summary('widening')).RUNNING === 1);
    await rpc(url, 'changeQueueRate', { name: 'widening', rate: 4 });
    await eventually(async () => (await summary('widening')).RUNNING === 4, 700, 20);

    await rpc(url, 'createQueue', { name: 'closing' });
    await rpc(url, 'pauseQueue', { name: 'closing' });
    await create('closing', 'c1');
    await rpc(url, 'closeQueue', { name: 'closing' });
    await rpc(url, 'resumeQueue', { name: 'closing' });
    await sleep(300); // kept: time for a wrongful start of c1 in the closed queue to show
    expect(await statusOf('closing', 'c1')).toBe('READY');
    await rpc(url, 'openQueue', { name: 'closing' });
    await eventually(async () => (await statusOf('closing', 'c1')) === 'SUCCEEDED');
  }, 30_000);
});
