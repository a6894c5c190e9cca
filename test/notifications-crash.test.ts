import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { post } from './helpers/gateway.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.js';
import { startSink, type Sink } from './channels/sink.js';
import { waitFor } from './helpers/notification-peers.js';

// A gateway is SIGKILLed in the middle of a delivery batch; a second process takes over once the leases run out.
// Nothing accepted is lost: every record ends DELIVERED, and every webhook was called at least once.

describe('delivery survives a SIGKILL mid-batch (PostgreSQL, two processes)', () => {
  let db: FreshDatabase | undefined;
  let sink: Sink | undefined;
  const children: GatewayProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await sink?.close();
    await db?.drop();
  });

  it('every accepted record is final afterwards and none is lost', async () => {
    db = await freshDatabase('postgres');
    sink = await startSink();
    sink.reply({ status: 200, body: { ok: true }, delayMs: 400 });
    const env = { ...db.env, DELIVERY_BATCH: '10', DELIVERY_LEASE_SECONDS: '2', DELIVERY_POLL_MS: '100' };

    const first = startGatewayProcess(env);
    children.push(first);
    const url = await first.url;
    const total = 50;
    for (let i = 0; i < total; i++) {
      const answer = await post(url, '/v1/systems/crash/webhook', JSON.stringify({ url: `${sink.url}/n/${i}`, body: { i } }));
      expect(answer.status).toBe(200);
    }
    await waitFor(async () => sink!.requests.length >= 12, 20_000, 20); // the second batch is in flight
    const exited = new Promise((r) => first.proc.once('exit', r));
    first.proc.kill('SIGKILL');
    await exited;

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const counts = async () =>
        Object.fromEntries((await client.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM "Notification" GROUP BY status')).rows.map((r) => [r.status, r.n]));
      const midway = await counts();
      expect(midway.SENDING ?? 0).toBeGreaterThan(0); // killed with leases held

      const second = startGatewayProcess(env);
      children.push(second);
      await second.url;
      const final = await waitFor(async () => {
        const c = await counts();
        return (c.DELIVERED ?? 0) === total && c;
      }, 40_000, 200);
      expect(final).toEqual({ DELIVERED: total });
      const called = new Set(sink.requests.map((r) => r.url));
      for (let i = 0; i < total; i++) expect(called.has(`/n/${i}`), `/n/${i}`).toBe(true);
      // At-least-once: only the units in flight at the kill may have been called twice.
      expect(sink.requests.length - total).toBeLessThanOrEqual(10);
      await second.stop();
    } finally {
      await client.end();
    }
  }, 90_000);
});
