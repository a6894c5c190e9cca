import pg from 'pg';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { post } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { startSink, type Sink } from './channels/sink.js';

// A delivery slower than DELIVERY_LEASE_SECONDS: the sending gateway renews its lease, so the other gateway on the
// same database never takes the notification over and the peer is called exactly once.

describe('delivery leases are renewed while a slow send runs (PostgreSQL, two gateways)', () => {
  let db: FreshDatabase | undefined;
  let sink: Sink | undefined;
  const gateways: Gateway[] = [];
  afterAll(async () => {
    for (const g of gateways) await g.close();
    await sink?.close();
    await db?.drop();
  });

  it('a 2.5 s webhook under a 1 s lease is sent once and DELIVERED', async () => {
    db = await freshDatabase('postgres');
    sink = await startSink();
    sink.reply({ status: 200, body: { ok: true }, delayMs: 2500 });
    const env = { PORT: '0', HOST: '127.0.0.1', AUTH: 'off', OUTBOUND_ALLOW: '127.0.0.1', LOG_LEVEL: 'silent', ...db.env, DELIVERY_LEASE_SECONDS: '1', DELIVERY_POLL_MS: '100', SCHEDULER: 'off', TASK_DISPATCHER: 'off' };
    for (let i = 0; i < 2; i++) gateways.push(await startGateway(loadConfig(env), { log: pino({ level: 'silent' }) }));
    const sent = await post(gateways[0]!.url, '/v1/systems/slow/webhook', JSON.stringify({ url: `${sink.url}/slow`, body: { n: 1 } }));
    expect(sent.status).toBe(200);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const status = async () => (await client.query<{ status: string; attempts: number }>('SELECT status, attempts FROM "Notification"')).rows[0];
      const final = await eventually(async () => {
        const row = await status();
        return row?.status === 'DELIVERED' && row;
      }, 10_000);
      expect(final).toEqual({ status: 'DELIVERED', attempts: 1 });
      await new Promise((r) => setTimeout(r, 1500)); // time for a wrongful second claim to show
      expect(sink.requests.filter((r) => r.url === '/slow')).toHaveLength(1);
    } finally {
      await client.end();
    }
  }, 40_000);
});
