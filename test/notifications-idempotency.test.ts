import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { sleep } from './helpers/sink.js';

// Idempotency-Key records live IDEMPOTENCY_TTL_SECONDS: within it a key answers with its first result (or 409 for
// another body); after it the key is free again and the system's expired records are deleted.

describe.each(DATABASES)('Idempotency-Key expiry on %s', (kind) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(kind, { IDEMPOTENCY_TTL_SECONDS: '1', DELIVERY_WORKER: 'off', TASK_DISPATCHER: 'off', SCHEDULER: 'off' });
  }, 60_000);
  afterAll(async () => t?.close());

  it('answers the first result within the TTL, frees the key after it and deletes expired records', async () => {
    const send = (key: string, n: number) =>
      post(t.url, '/v1/systems/ttl-sys/webhook', JSON.stringify({ url: 'http://127.0.0.1:9/hook', body: { n } }), { 'idempotency-key': key });
    const [key, other] = [randomUUID(), randomUUID()];
    const first = await send(key, 1);
    expect(first.status).toBe(200);
    expect((await send(other, 1)).status).toBe(200);
    expect((await send(key, 1)).body).toEqual(first.body);
    expect((await send(key, 2)).status).toBe(409);

    await sleep(1200); // kept: the 1 s TTL running out is what is under test
    const reused = await send(key, 2);
    expect(reused.status).toBe(200);
    expect(reused.body.incomingId).not.toBe(first.body.incomingId);
    const records = await t.gateway.services.db.idempotencyRecord.findMany({ where: { systemId: 'ttl-sys' } });
    expect(records.map((r) => [r.key, (r.response as { incomingId: string }).incomingId])).toEqual([[key, reused.body.incomingId]]);
    expect((await send(key, 2)).body).toEqual(reused.body);
  });
});
