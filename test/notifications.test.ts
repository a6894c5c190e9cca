import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { channelSettings, startPeers, waitFor, type Peers } from './helpers/notification-peers.js';

// Area F end to end: validation at the edge, one-transaction acceptance, Idempotency-Key, and delivery by the
// worker to real peers (HTTP sinks, an SMTP server, an SMPP server), deferral, expiry, retries and final statuses.

let peers: Peers;
beforeAll(async () => {
  peers = await startPeers();
});
afterAll(async () => {
  await peers.close();
});

async function get(url: string, path: string, method = 'GET'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, { method });
  return { status: res.status, body: await res.json() };
}

const FINAL = ['DELIVERED', 'FAILED', 'EXPIRED'];

describe.each(DATABASES)('notification sending on %s', (kind) => {
  let gw: TestGateway;
  const sys = 'city-hall';

  /** Waits until every unit of the request is final and returns them. */
  async function settled(type: string, incomingId: string, timeoutMs = 10_000): Promise<any[]> {
    return waitFor(async () => {
      const page = await get(gw.url, `/v1/systems/${sys}/type/${type}/incomingId/${incomingId}`);
      const content = page.body.content as any[];
      return content.length > 0 && content.every((n) => FINAL.includes(n.status)) && content;
    }, timeoutMs);
  }

  beforeAll(async () => {
    gw = await startTestGateway(kind, {
      DELIVERY_POLL_MS: '50',
      DELIVERY_RETRY_SCHEDULE: '100ms,200ms',
      DELIVERY_LEASE_SECONDS: '30',
    });
    for (const [channel, config] of Object.entries(channelSettings(peers))) {
      const answer = await gql(gw.url, 'mutation($c: NotificationChannel!, $cfg: JSON!) { setSystemChannel(systemId: "city-hall", channel: $c, config: $cfg) { channel } }', { c: channel, cfg: config });
      expect(answer.errors).toBeUndefined();
    }
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
  });

  it('refuses bad bodies naming every bad field, and stores nothing', async () => {
    const bad = await post(
      gw.url,
      `/v1/systems/${sys}/sms`,
      JSON.stringify({ phoneNumbers: ['+7 900 123-45-67', 'call me'], text: '', sendAfter: '2030-01-02T00:00:00Z', sendBefore: '2030-01-01T00:00:00+03:00', colour: 'red' }),
    );
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, error: 'Bad Request', code: 'BAD_USER_INPUT' });
    expect(typeof bad.body.timestamp).toBe('string');
    const fields = (bad.body.fields as { field: string }[]).map((f) => f.field).sort();
    expect(fields).toEqual(['body.colour', 'body.phoneNumbers.1', 'body.sendBefore', 'body.text']);

    const cases: [string, unknown, string[]][] = [
      ['push', { deviceTokens: ['t'], title: 'x', image: 'https://cdn.example/a.gif' }, ['body.image']],
      ['webhook-chatB', { content: 'hi', type: 'alert' }, ['body.type']],
      ['webhook', { url: 'ftp://x', method: 'FETCH', timeOutSeconds: 0 }, ['body.method', 'body.timeOutSeconds', 'body.url']],
      ['email', { to: ['not-an-address'], from: 'also bad' }, ['body.from', 'body.to.0']],
      ['webhook-chatA', { content: 'hi', chatId: 'no spaces allowed' }, ['body.chatId']],
      ['push', { title: 'no target' }, ['body.deviceTokens']],
    ];
    for (const [path, body, expected] of cases) {
      const answer = await post(gw.url, `/v1/systems/${sys}/${path}`, JSON.stringify(body));
      expect(answer.status, path).toBe(400);
      expect((answer.body.fields as { field: string }[]).map((f) => f.field).sort(), path).toEqual(expected);
    }
    for (const type of ['sms', 'push', 'chatB', 'webhook', 'email', 'chatA']) {
      expect((await get(gw.url, `/v1/type/${type}`)).body.totalElements, type).toBe(0);
    }
  });

  it('accepts a webhook at once and delivers the exact request; the stub paths show it DELIVERED', async () => {
    const path = `/hook/${randomUUID()}`;
    const accepted = await post(
      gw.url,
      `/v1/systems/${sys}/webhook`,
      JSON.stringify({ url: `${peers.webhook.url}${path}`, method: 'PUT', headers: [{ name: 'X-Token', value: 'abc' }], body: { hello: 'world' }, flag: 'URGENT' }),
    );
    expect(accepted.status).toBe(200);
    expect(accepted.body.incomingId).toMatch(/^[0-9a-f-]{36}$/);
    expect(accepted.body.notificationResponses).toEqual([{ id: expect.any(String), recipient: `${peers.webhook.url}${path}`, status: 'PENDING' }]);
    const [unit] = await settled('webhook', accepted.body.incomingId);
    expect(unit).toMatchObject({ status: 'DELIVERED', attempts: 1, flag: 'URGENT', channel: 'webhook', systemId: sys });
    const seen = peers.webhook.requests.filter((r) => r.url === path);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'PUT', body: '{"hello":"world"}' });
    expect(seen[0]!.headers['x-token']).toBe('abc');
    const byId = await get(gw.url, `/v1/type/webhook/ids/${unit.id}`);
    expect(byId.body).toMatchObject({ totalElements: 1, pageSize: 50, currentPage: 0, totalPages: 1, sortBy: 'createTime', order: 'DESC' });
  });

  it('Idempotency-Key: a retry returns the first answer and sends once; another body under the key is 409', async () => {
    const path = `/idem/${randomUUID()}`;
    const body = JSON.stringify({ url: `${peers.webhook.url}${path}`, body: { n: 1 } });
    const key = randomUUID();
    const first = await post(gw.url, `/v1/systems/${sys}/webhook`, body, { 'idempotency-key': key });
    const again = await post(gw.url, `/v1/systems/${sys}/webhook`, body, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    await settled('webhook', first.body.incomingId);
    expect(peers.webhook.requests.filter((r) => r.url === path)).toHaveLength(1);
    const other = await post(gw.url, `/v1/systems/${sys}/webhook`, JSON.stringify({ url: `${peers.webhook.url}${path}`, body: { n: 2 } }), { 'idempotency-key': key });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ status: 409, code: 'CONFLICT' });
    // The GraphQL twin shares the key space: the same body under the key (as a header) answers the same.
    const twin = await gql(gw.url, 'mutation($r: JSON!) { sendNotification(systemId: "city-hall", channel: WEBHOOK, request: $r) { incomingId } }', { r: JSON.parse(body) }, { 'idempotency-key': key });
    expect(twin.data!.sendNotification.incomingId).toBe(first.body.incomingId);
  });

  it('Telegram, Mattermost and gaps receive their exact wire JSON; externalId is the provider id', async () => {
    const chatA = await post(gw.url, `/v1/systems/${sys}/webhook-chatA`, JSON.stringify({ content: 'Your passport is ready', chatId: '@cityhall', parseMode: 'HTML', disableNotification: true, replyToMessageId: 7, allowSendingWithoutReply: true }));
    const chatB = await post(gw.url, `/v1/systems/${sys}/webhook-chatB`, JSON.stringify({ content: 'Deploy done', channel: 'town-square', iconEmoji: ':tada:', type: 'custom_deploy', props: { build: 42 } }));
    const gaps = await post(gw.url, `/v1/systems/${sys}/gaps`, JSON.stringify({ from: 'registry', sendTime: '2026-01-31T12:00:00+03:00', gapsRequest: { documents: [{ id: 'd1' }] }, useSystemSettings: true }));
    for (const a of [chatA, chatB, gaps]) expect(a.status).toBe(200);
    const [tg] = await settled('chatA', chatA.body.incomingId);
    await settled('chatB', chatB.body.incomingId);
    await settled('gaps', gaps.body.incomingId);
    expect(tg.status).toBe('DELIVERED');
    const sent = peers.telegram.requests.find((r) => JSON.parse(r.body).text === 'Your passport is ready')!;
    expect(sent.url).toBe('/bot123456:TEST-token/sendMessage');
    expect(JSON.parse(sent.body)).toEqual({
      chat_id: '@cityhall',
      text: 'Your passport is ready',
      parse_mode: 'HTML',
      disable_notification: true,
      reply_parameters: { message_id: 7, allow_sending_without_reply: true },
    });
    const byExternal = await get(gw.url, `/v1/systems/${sys}/type/chatA/externalIds/${tg.externalId}`);
    expect(byExternal.body.content.map((n: any) => n.id)).toEqual([tg.id]);
    const mm = peers.mattermost.requests.find((r) => JSON.parse(r.body).text === 'Deploy done')!;
    expect(mm.url).toBe('/hooks/abc');
    expect(JSON.parse(mm.body)).toEqual({ text: 'Deploy done', channel: 'town-square', icon_emoji: ':tada:', type: 'custom_deploy', props: { build: 42 } });
    const portal = peers.gaps.requests.at(-1)!;
    expect(portal.url).toBe('/portal/send');
    expect(portal.headers.authorization).toBe('Bearer portal');
    expect(JSON.parse(portal.body)).toEqual({ from: 'registry', sendTime: '2026-01-31T12:00:00+03:00', gapsRequest: { documents: [{ id: 'd1' }] }, useSystemSettings: true });
  });

  it('push: one FCM v1 message per device token plus the condition', async () => {
    const before = peers.fcm.requests.length;
    const accepted = await post(
      gw.url,
      `/v1/systems/${sys}/push`,
      JSON.stringify({ title: 'Queue', body: 'Your turn', image: 'https://cdn.example/q.PNG', data: { window: 3 }, deviceTokens: ['tok-1', 'tok-2'], condition: "'news' in topics" }),
    );
    expect(accepted.body.notificationResponses.map((r: any) => r.recipient)).toEqual(['tok-1', 'tok-2', "condition:'news' in topics"]);
    const units = await settled('push', accepted.body.incomingId);
    expect(units.every((u) => u.status === 'DELIVERED' && u.externalId.startsWith('projects/demo/messages/'))).toBe(true);
    const bodies = peers.fcm.requests.slice(before).map((r) => ({ url: r.url, auth: r.headers.authorization, body: JSON.parse(r.body) }));
    const notification = { title: 'Queue', body: 'Your turn', image: 'https://cdn.example/q.PNG' };
    expect(bodies).toHaveLength(3);
    expect(bodies).toEqual(
      expect.arrayContaining([
        { url: '/v1/projects/demo/messages:send', auth: 'Bearer ya29.test', body: { message: { token: 'tok-1', notification, data: { window: '3' } } } },
        { url: '/v1/projects/demo/messages:send', auth: 'Bearer ya29.test', body: { message: { token: 'tok-2', notification, data: { window: '3' } } } },
        { url: '/v1/projects/demo/messages:send', auth: 'Bearer ya29.test', body: { message: { condition: "'news' in topics", notification, data: { window: '3' } } } },
      ]),
    );
  });

  it('sms: one submit_sm per number to the SMPP server', async () => {
    const before = peers.sms.length;
    const accepted = await post(gw.url, `/v1/systems/${sys}/sms`, JSON.stringify({ phoneNumbers: ['+7 (900) 111-22-33', '+79002223344'], text: 'Code 1234' }));
    expect(accepted.body.notificationResponses).toHaveLength(2);
    const units = await settled('sms', accepted.body.incomingId);
    expect(units.map((u) => u.status)).toEqual(['DELIVERED', 'DELIVERED']);
    expect(units.every((u) => /^smsc-\d+$/.test(u.externalId))).toBe(true);
    expect(peers.sms.slice(before).map((s) => s.destination_addr).sort()).toEqual(['79001112233', '79002223344']);
  });

  it('email: uploaded files attached, one letter per addressee with sendSeparate; attachments readable by id', async () => {
    const pdf = Buffer.from('%PDF-1.4 certificate');
    const upload = await post(gw.url, `/v1/systems/${sys}/files`, JSON.stringify({ files: [{ filename: 'certificate.pdf', contentType: 'application/pdf', data: pdf.toString('base64') }] }));
    expect(upload.status).toBe(201);
    const fileGroupId = upload.body.fileGroupId as string;
    const fileId = upload.body.files[0].id as string;
    const unknownGroup = await post(gw.url, `/v1/systems/${sys}/email`, JSON.stringify({ to: ['a@example.org'], fileGroupId: randomUUID() }));
    expect(unknownGroup.status).toBe(400);
    expect(unknownGroup.body.fields).toEqual([{ field: 'fileGroupId', message: expect.stringContaining('no file group') }]);
    const subject = `Certificate ${randomUUID()}`;
    const accepted = await post(
      gw.url,
      `/v1/systems/${sys}/email`,
      JSON.stringify({ to: ['anna@example.org'], cc: ['boris@example.org'], subject, content: '<b>Ready</b>', contentType: 'HTML', importance: 'HIGH', fileGroupId, sendSeparate: true }),
    );
    expect(accepted.body.notificationResponses.map((r: any) => r.recipient)).toEqual(['anna@example.org', 'boris@example.org']);
    const units = await settled('email', accepted.body.incomingId);
    expect(units.map((u) => u.status)).toEqual(['DELIVERED', 'DELIVERED']);
    const letters = peers.letters.filter((l) => l.raw.includes(subject));
    expect(letters.map((l) => l.rcptTo).sort()).toEqual([['anna@example.org'], ['boris@example.org']]);
    for (const l of letters) {
      expect(l.raw).toMatch(/Importance: high/i);
      expect(l.raw).toContain('certificate.pdf');
      expect(l.raw).toContain(pdf.toString('base64'));
    }
    const attachments = await get(gw.url, `/v1/type/email/id/${units[0].id}/attachments?attachmentIds=${fileId}`);
    expect(attachments.body).toEqual([{ id: units[0].id, attachmentId: fileId, filename: 'certificate.pdf', data: [pdf.toString('base64')] }]);
  });

  it('defers until sendAfter, expires past sendBefore, retries 5xx with backoff, then FAILED with the reason', async () => {
    const deferredPath = `/later/${randomUUID()}`;
    const deferred = await post(gw.url, `/v1/systems/${sys}/webhook`, JSON.stringify({ url: `${peers.webhook.url}${deferredPath}`, sendAfter: new Date(Date.now() + 1200).toISOString() }));
    const flakyPath = `/flaky/${randomUUID()}`;
    const deadPath = `/dead/${randomUUID()}`;
    const latePath = `/late/${randomUUID()}`;
    let flaky = 0;
    peers.webhook.reply((req) => {
      if (req.url === flakyPath) return ++flaky <= 2 ? { status: 503, body: 'busy' } : { status: 200 };
      if (req.url === deadPath || req.url === latePath) return { status: 500, body: 'down' };
      return { status: 200 };
    });
    const flakyAccepted = await post(gw.url, `/v1/systems/${sys}/webhook`, JSON.stringify({ url: `${peers.webhook.url}${flakyPath}` }));
    const deadAccepted = await post(gw.url, `/v1/systems/${sys}/webhook`, JSON.stringify({ url: `${peers.webhook.url}${deadPath}` }));
    const lateAccepted = await post(gw.url, `/v1/systems/${sys}/webhook`, JSON.stringify({ url: `${peers.webhook.url}${latePath}`, sendBefore: new Date(Date.now() + 250).toISOString() }));

    await new Promise((r) => setTimeout(r, 500)); // kept: that nothing is sent during this half second (before sendAfter) is checked
    expect(peers.webhook.requests.filter((r) => r.url === deferredPath)).toHaveLength(0);
    const [d] = await settled('webhook', deferred.body.incomingId);
    expect(d.status).toBe('DELIVERED');
    expect(new Date(d.deliveredTime).getTime()).toBeGreaterThanOrEqual(new Date(d.sendAfter).getTime());

    const [f] = await settled('webhook', flakyAccepted.body.incomingId);
    expect(f).toMatchObject({ status: 'DELIVERED', attempts: 3 });
    const [x] = await settled('webhook', deadAccepted.body.incomingId);
    expect(x).toMatchObject({ status: 'FAILED', attempts: 3 });
    expect(x.lastError).toMatch(/^gave up after 3 attempts: .*500/);
    const [late] = await settled('webhook', lateAccepted.body.incomingId);
    expect(late.status).toBe('EXPIRED');
    expect(late.lastError).toMatch(/sendBefore passed/);
    peers.webhook.reply({ status: 200 });
    // A FAILED unit may be sent again through the stub PUT (FAILED -> PENDING resets its attempts).
    const resend = await get(gw.url, `/v1/type/webhook/ids/${x.id}?status=PENDING`, 'PUT');
    expect(resend.status).toBe(200);
    const [again] = await waitFor(async () => {
      const page = await get(gw.url, `/v1/type/webhook/ids/${x.id}`);
      return page.body.content[0].status === 'DELIVERED' && page.body.content;
    });
    expect(again).toMatchObject({ status: 'DELIVERED', attempts: 1, lastError: null });
  });

  it('channel settings are validated by the channel config schema and never shown back', async () => {
    const bad = await gql(gw.url, 'mutation { setSystemChannel(systemId: "city-hall", channel: SMS, config: {host: "", systemId: "x"}) { channel } }');
    expect(bad.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'config', message: expect.stringContaining('invalid sms settings') }] });
    const general = await gql(gw.url, 'mutation { setSystemChannel(systemId: "city-hall", channel: GENERAL, config: {}) { channel } }');
    expect(general.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
    const listed = await gql(gw.url, '{ systemChannels(systemId: "city-hall") { channel } }');
    expect(listed.data!.systemChannels.map((c: any) => c.channel)).toEqual(['CHAT_A', 'CHAT_B', 'EMAIL', 'GAPS', 'PUSH', 'SMS', 'WEBHOOK']);
  });

  it('a channel without settings ends FAILED saying so', async () => {
    const accepted = await post(gw.url, '/v1/systems/other-system/sms', JSON.stringify({ phoneNumbers: ['+79001234567'], text: 'x' }));
    const [unit] = await waitFor(async () => {
      const page = await get(gw.url, `/v1/systems/other-system/type/sms/incomingId/${accepted.body.incomingId}`);
      return page.body.content[0]?.status === 'FAILED' && page.body.content;
    });
    expect(unit.lastError).toBe('channel sms is not configured for system other-system (set it with the setSystemChannel mutation)');
  });
});

describe('flag orders delivery (one unit per claim)', () => {
  it('URGENT goes before NORMAL and LOW that became due at the same time', async () => {
    const gw = await startTestGateway('pglite', { DELIVERY_POLL_MS: '50', DELIVERY_BATCH: '1' });
    try {
      const sendAfter = new Date(Date.now() + 2500).toISOString();
      const run = randomUUID();
      for (const flag of ['LOW', 'NORMAL', 'URGENT', 'HIGH']) {
        const answer = await post(gw.url, '/v1/systems/s/webhook', JSON.stringify({ url: `${peers.webhook.url}/order/${run}/${flag}`, flag, sendAfter }));
        expect(answer.status).toBe(200);
      }
      const seen = await waitFor(async () => {
        const calls = peers.webhook.requests.filter((r) => r.url.startsWith(`/order/${run}/`)).map((r) => r.url.split('/').at(-1));
        return calls.length === 4 && calls;
      });
      expect(seen).toEqual(['URGENT', 'HIGH', 'NORMAL', 'LOW']);
    } finally {
      await gw.close();
    }
  }, 60_000);
});
