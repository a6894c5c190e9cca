import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { post, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';

// A batch of the most calls a client may send must never hold the process: the probes an orchestrator sends meanwhile
// are answered at once. Alone in its run (vitest.config.ts): it bounds a latency.

describe.each(DATABASES)('a maximal batch and the health probe on %s', (kind) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(kind, { MAX_BATCH_CALLS: '100', SCHEDULER: 'off', DELIVERY_WORKER: 'off' });
  });
  afterAll(() => t?.close());

  it('while a batch of the maximum size runs, /healthz answers within 100 ms', async () => {
    for (let i = 0; i < 20; i++) await rpc(t.url, 'createQueue', { name: `fill-${i}` });
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'listQueues', params: { pageSize: 50 } }));
    let running = true;
    const slowest: number[] = [];
    const answered = post(t.url, '/rpc', JSON.stringify(batch)).finally(() => (running = false));
    while (running) {
      const started = performance.now();
      const res = await fetch(`${t.url}/healthz`);
      await res.text();
      slowest.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 5)); // the probe's sampling interval, not a wait for anything
    }
    const { status, body } = await answered;
    expect(status).toBe(200);
    expect(body).toHaveLength(100);
    expect(body.every((a: { result?: { queues?: unknown[] } }) => a.result?.queues?.length)).toBe(true);
    expect(slowest.length).toBeGreaterThan(2);
    expect(Math.max(...slowest)).toBeLessThan(100);
  });
});
