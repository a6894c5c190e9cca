import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { NO_WORKERS, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { sampleOf } from './helpers/metrics.js';

// gateway_group_commit_items on /metrics: how many items each group-commit statement wrote (src/db/group-commit.ts).

/** The histogram's _sum and _count for one writer, as /metrics shows them. */
async function itemsOf(url: string, writer: string): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return { sum: sampleOf(text, 'gateway_group_commit_items_sum', `writer="${writer}"`), count: sampleOf(text, 'gateway_group_commit_items_count', `writer="${writer}"`) };
}

describe.each(DATABASES)('group commit metrics on %s', (kind) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(kind, NO_WORKERS);
  });
  afterAll(() => gw?.close());

  it('counts the statements that created queues and the queues each one wrote', async () => {
    expect(await itemsOf(gw.url, 'queue_create')).toEqual({ sum: Number.NaN, count: Number.NaN });
    const one = await rpc(gw.url, 'createQueue', { name: 'alone', rate: 1 });
    expect(one.body.error).toBeUndefined();
    expect(await itemsOf(gw.url, 'queue_create')).toEqual({ sum: 1, count: 1 });

    // Twelve at once: those that arrive while a statement runs share the next one (on PostgreSQL under load; the
    // embedded database's statements are over before the next request is read), so 2 to 13 statements in all.
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => rpc(gw.url, 'createQueue', { name: `together-${i}`, rate: 1 })));
    expect(answers.map((a) => a.body.error)).toEqual(Array(12).fill(undefined));
    const { sum, count } = await itemsOf(gw.url, 'queue_create');
    expect(sum).toBe(13);
    expect(count).toBeGreaterThanOrEqual(2);
    expect(count).toBeLessThanOrEqual(13);
  });
});
