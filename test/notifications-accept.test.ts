import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { eventually, startSink, type Sink } from './helpers/sink.js';

// Acceptances that arrive together share one statement (group commit, src/notifications/notifications.ts): each
// request still gets its own answer, a key replays or conflicts as it would alone, one request's refusal is not
// another's, and the shared NOTIFY wakes the delivery worker (its poll interval here is ten minutes).

describe.each(DATABASES)('concurrent acceptance on %s', (kind) => {
  let t: TestGateway;
  let sink: Sink;
  beforeAll(async () => {
    sink = await startSink();
    t = await startTestGateway(kind, { DELIVERY_POLL_MS: '600000', TASK_DISPATCHER: 'off', SCHEDULER: 'off' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await sink?.close();
  });

  it('stores each request once with its own answer; keys replay or conflict; a missing file group refuses only its request; the NOTIFY wakes the worker', async () => {
    const sys = `acc-${randomUUID().slice(0, 8)}`;
    const send = (channel: string, body: unknown, key?: string) =>
      post(t.url, `/v1/systems/${sys}/${channel}`, JSON.stringify(body), key === undefined ? {} : { 'idempotency-key': key });
    const hook = (n: string | number) => ({ url: `${sink.url}/hook/${sys}/${n}`, body: { n } });
    const [same, contested] = [randomUUID(), randomUUID()];
    const answers = await Promise.all([
      ...Array.from({ length: 30 }, (_, n) => send('webhook', hook(n))),
      ...Array.from({ length: 10 }, () => send('webhook', hook('same'), same)),
      send('webhook', hook('contested-1'), contested),
      send('webhook', hook('contested-2'), contested),
      send('email', { to: ['a@example.org'], subject: 's', content: 't', fileGroupId: randomUUID() }),
    ]);
    const plain = answers.slice(0, 30);
    const keyed = answers.slice(30, 40);
    const pair = answers.slice(40, 42);
    const email = answers[42]!;

    expect(plain.map((a) => a.status)).toEqual(Array(30).fill(200));
    expect(new Set(plain.map((a) => a.body.incomingId)).size).toBe(30);
    plain.forEach((a, n) => expect(a.body.notificationResponses).toEqual([{ id: expect.any(String), recipient: `${sink.url}/hook/${sys}/${n}`, status: 'PENDING' }]));
    expect(keyed.map((a) => a.status)).toEqual(Array(10).fill(200));
    for (const a of keyed) expect(a.body).toEqual(keyed[0]!.body);
    expect(pair.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(email.status).toBe(400);
    expect(email.body.fields).toEqual([{ field: 'fileGroupId', message: expect.stringContaining('no file group') }]);

    const db = t.gateway.services.db;
    const stored = await db.notification.findMany({ where: { systemId: sys } });
    expect(stored).toHaveLength(32);
    expect(new Set(stored.map((n) => n.incomingId)).size).toBe(32);
    expect(stored.filter((n) => n.channel === 'email')).toHaveLength(0);
    const byIncoming = new Map(stored.map((n) => [n.incomingId, n]));
    for (const a of [...plain, keyed[0]!, pair.find((p) => p.status === 200)!]) {
      const unit = byIncoming.get(a.body.incomingId)!;
      expect(unit).toMatchObject({ id: a.body.notificationResponses[0].id, status: expect.any(String), systemId: sys, channel: 'webhook', attempts: expect.any(Number) });
    }
    const records = await db.idempotencyRecord.findMany({ where: { systemId: sys } });
    expect(records.map((r) => r.key).sort()).toEqual([same, contested].sort());
    expect(records.find((r) => r.key === same)!.response).toEqual(keyed[0]!.body);

    // Delivered without waiting for the ten-minute poll: the acceptance NOTIFY woke the worker.
    await eventually(() => Promise.resolve(sink.hits.filter((h) => h.path.startsWith(`/hook/${sys}/`)).length >= 32), 15_000);
    expect(sink.hits.filter((h) => h.path.startsWith(`/hook/${sys}/`))).toHaveLength(32);
  });

  it("a request the database refuses fails alone: the others of its group are stored and answered", async () => {
    const sys = `acc-${randomUUID().slice(0, 8)}`;
    const send = (body: unknown) => post(t.url, `/v1/systems/${sys}/webhook`, JSON.stringify(body));
    // A definite refusal by the database (a CHECK this test adds) of a request valid for the rules: the whole shared
    // statement fails, and is retried request by request. (A lone surrogate, once used here, is now refused by the rules.)
    const db = t.gateway.services.db;
    await db.$executeRawUnsafe(`ALTER TABLE "Notification" ADD CONSTRAINT test_refused CHECK (strpos(recipient, '/refused-by-db') = 0)`);
    try {
      const answers = await Promise.all([
        ...Array.from({ length: 12 }, (_, n) => send({ url: `${sink.url}/ok/${n}`, body: { n } })),
        send({ url: `${sink.url}/refused-by-db`, body: { text: 'x' } }),
        ...Array.from({ length: 12 }, (_, n) => send({ url: `${sink.url}/ok/${n + 12}`, body: { n } })),
      ]);
      expect(answers.filter((a) => a.status === 200)).toHaveLength(24);
      expect(answers[12]!.status).toBeGreaterThanOrEqual(500);
    } finally {
      await db.$executeRawUnsafe('ALTER TABLE "Notification" DROP CONSTRAINT test_refused');
    }
    const stored = await db.notification.findMany({ where: { systemId: sys } });
    expect(stored.map((n) => n.recipient).sort()).toEqual(Array.from({ length: 24 }, (_, n) => `${sink.url}/ok/${n}`).sort());
  });
});
