import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { eventually, sleep } from './helpers/sink.js';
import { startTaskSink, type TaskSink } from './helpers/task-sink.js';

// One queue's hanging targets must not starve the others. A process runs TASK_CONCURRENCY (100) tasks at once; a
// queue of rate 1000 gets 150 tasks whose target never answers (each attempt may wait 600 s, the most a task may ask
// for). Before, they took all 100 slots and another queue's tasks waited until one of them gave up. Now the hanging
// queue holds its default share (half) and the other queue's tasks start at once: p95 of their wait under 5 s.

const P95_BOUND_MS = 5000;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

describe.each(DATABASES)('fair dispatch on %s', (kind) => {
  let t: TestGateway;
  let sink: TaskSink;
  beforeAll(async () => {
    sink = await startTaskSink();
    t = await startTestGateway(kind, { SCHEDULER: 'off', DELIVERY_WORKER: 'off' });
  }, 60_000);
  afterAll(async () => {
    sink?.release(); // the held requests end, so the gateway's stop does not wait for them
    await t?.close();
    await sink?.close();
  });

  it("150 tasks whose target never answers take half of a process's slots; another queue's tasks wait p95 < 5 s", async () => {
    await rpc(t.url, 'createQueue', { name: 'hanging', rate: 1000 });
    for (let i = 0; i < 150; i++) {
      const created = await rpc(t.url, 'createTask', { queueName: 'hanging', name: `h${i}`, target: { url: `${sink.url}/hold`, timeoutSeconds: 600 } });
      expect(created.status).toBe(200);
    }
    const holding = () => sink.hits.filter((h) => h.queue === 'hanging' && h.end === undefined).length;
    await eventually(async () => holding() === 50, 20_000);

    await rpc(t.url, 'createQueue', { name: 'other', rate: 100 });
    const createdAt = new Map<string, number>();
    for (let i = 0; i < 100; i++) {
      const name = `o${i}`;
      const created = await rpc(t.url, 'createTask', { queueName: 'other', name, target: { url: `${sink.url}/work?ms=20` } });
      expect(created.status).toBe(200);
      createdAt.set(name, Date.now());
    }
    await eventually(async () => sink.hits.filter((h) => h.queue === 'other' && h.status === 200).length === 100, 60_000);
    const waits = sink.hits.filter((h) => h.queue === 'other').map((h) => h.start - createdAt.get(h.task)!);
    expect(percentile(waits, 95)).toBeLessThan(P95_BOUND_MS);

    // The hanging queue never held more than its share, and still does.
    await sleep(300); // a round after the other queue emptied, when its slots could go to the hanging queue
    expect(holding()).toBe(50);
    expect(sink.hits.filter((h) => h.queue === 'hanging')).toHaveLength(50);
  }, 90_000);
});
