import { LOOPBACK } from './sink.js';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { closeEmailTransports, emailAdapter, emailConfigSchema, type EmailConfig } from '../../src/channels/email.js';

interface Received {
  from: string;
  rcptTo: string[];
  raw: string;
}

let server: SMTPServer;
let config: EmailConfig;
const received: Received[] = [];
/** Scripted refusals: address -> SMTP reply for RCPT TO; `dataReply` for end of DATA. */
const rcptReplies = new Map<string, { code: number; text: string }>();
let dataReply: { code: number; text: string } | undefined;
let connections = 0;

function smtpError(reply: { code: number; text: string }): Error {
  return Object.assign(new Error(reply.text), { responseCode: reply.code });
}

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onConnect(_session, callback) {
      connections += 1;
      callback();
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const reply = rcptReplies.get(address.address);
      callback(reply ? smtpError(reply) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (dataReply) return callback(smtpError(dataReply));
        const mailFrom = session.envelope.mailFrom;
        received.push({
          from: mailFrom ? mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  config = emailConfigSchema.parse({ host: '127.0.0.1', port, from: 'noreply@gov.example', fromName: 'Gateway', timeoutSeconds: 5 });
});
beforeEach(() => {
  received.length = 0;
  rcptReplies.clear();
  dataReply = undefined;
});
afterAll(async () => {
  closeEmailTransports();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Unfolded top-level headers of a raw message. */
function headersOf(raw: string): Map<string, string> {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? '';
  const map = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) map.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
  }
  return map;
}

describe('email over SMTP', () => {
  it('delivers an HTML letter with display name, cc, bcc only in the envelope, importance headers and an attachment', async () => {
    const outcome = await emailAdapter.send(
      {
        to: ['alice@example.org', 'bob@example.org'],
        cc: ['carol@example.org'],
        bcc: ['auditor@example.org'],
        from: 'office@gov.example',
        displayName: 'City Office, Permits',
        subject: 'Your permit',
        importance: 'HIGH',
        contentType: 'HTML',
        content: '<p>Approved</p>',
        attachments: [{ filename: 'permit.pdf', content: Buffer.from('%PDF-1.4 test'), contentType: 'application/pdf' }],
      },
      config, LOOPBACK);
    expect(outcome).toMatchObject({ kind: 'delivered', providerMessageId: expect.stringMatching(/^<.+@.+>$/) });
    expect(received).toHaveLength(1);
    const mail = received[0]!;
    expect(mail.from).toBe('office@gov.example');
    expect(mail.rcptTo.sort()).toEqual(['alice@example.org', 'auditor@example.org', 'bob@example.org', 'carol@example.org']);
    const h = headersOf(mail.raw);
    // RFC 5322 display-name: nodemailer quotes it when it has specials (here the comma), encodes non-ASCII.
    expect(h.get('from')).toBe('"City Office, Permits" <office@gov.example>');
    expect(h.get('to')).toBe('alice@example.org, bob@example.org');
    expect(h.get('cc')).toBe('carol@example.org');
    expect(h.has('bcc')).toBe(false);
    expect(mail.raw).not.toContain('auditor@example.org');
    expect(h.get('subject')).toBe('Your permit');
    expect(h.get('importance')).toBe('high');
    expect(h.get('x-priority')).toBe('1');
    expect(h.get('content-type')).toMatch(/^multipart\/mixed/);
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
    expect(mail.raw).not.toMatch(/Content-Type: text\/plain/);
    expect(mail.raw).toContain('<p>Approved</p>');
    expect(mail.raw).toMatch(/Content-Type: application\/pdf; name=permit\.pdf/);
    expect(mail.raw).toMatch(/Content-Disposition: attachment; filename=permit\.pdf/);
    expect(mail.raw).toContain(Buffer.from('%PDF-1.4 test').toString('base64'));
  });

  it('sends plain text by default, from the configured sender, with LOW and NORMAL mapped, over one pooled connection', async () => {
    await emailAdapter.send({ to: ['warm@example.org'], subject: 'warm-up', content: 'x' }, config, LOOPBACK);
    received.length = 0;
    const before = connections;
    await emailAdapter.send({ to: ['a@example.org'], subject: 'Low', content: 'plain body', importance: 'LOW', contentType: 'TEXT' }, config, LOOPBACK);
    await emailAdapter.send({ to: ['a@example.org'], subject: 'Normal', content: 'x', importance: 'NORMAL' }, config, LOOPBACK);
    await emailAdapter.send({ to: ['a@example.org'], subject: 'None', content: 'x' }, config, LOOPBACK);
    const [low, normal, none] = received.map((m) => headersOf(m.raw));
    expect(low?.get('from')).toBe('Gateway <noreply@gov.example>');
    expect(low?.get('content-type')).toMatch(/^text\/plain/);
    expect(received[0]?.raw).toContain('plain body');
    expect([low?.get('importance'), low?.get('x-priority')]).toEqual(['low', '5']);
    expect([normal?.get('importance'), normal?.get('x-priority')]).toEqual(['normal', '3']);
    expect(none?.has('importance')).toBe(false);
    expect(none?.has('x-priority')).toBe(false);
    expect(connections - before).toBe(0);
  });

  it('SMTP 550 is permanent, 451 is retryable', async () => {
    rcptReplies.set('gone@example.org', { code: 550, text: 'Mailbox unavailable' });
    rcptReplies.set('busy@example.org', { code: 451, text: 'Try again later' });
    expect(await emailAdapter.send({ to: ['gone@example.org'], subject: 's', content: 'c' }, config, LOOPBACK)).toMatchObject({
      kind: 'permanent',
      reason: expect.stringContaining('550'),
    });
    expect(await emailAdapter.send({ to: ['busy@example.org'], subject: 's', content: 'c' }, config, LOOPBACK)).toMatchObject({
      kind: 'retryable',
      reason: expect.stringContaining('451'),
    });
    dataReply = { code: 452, text: 'Insufficient system storage' };
    expect((await emailAdapter.send({ to: ['a@example.org'], subject: 's', content: 'c' }, config, LOOPBACK)).kind).toBe('retryable');
    dataReply = { code: 554, text: 'Transaction failed: spam' };
    expect((await emailAdapter.send({ to: ['a@example.org'], subject: 's', content: 'c' }, config, LOOPBACK)).kind).toBe('permanent');
  });

  it('a partly rejected recipient list is delivered with the rejected addresses in the detail', async () => {
    rcptReplies.set('gone@example.org', { code: 550, text: 'Mailbox unavailable' });
    const outcome = await emailAdapter.send({ to: ['a@example.org', 'gone@example.org'], subject: 's', content: 'c' }, config, LOOPBACK);
    expect(outcome).toMatchObject({ kind: 'delivered', detail: expect.stringContaining('rejected: gone@example.org') });
    expect(received[0]?.rcptTo).toEqual(['a@example.org']);
  });

  it('an unreachable server is retryable; no recipients is permanent', async () => {
    const probe = new SMTPServer({ logger: false });
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.server.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const down = emailConfigSchema.parse({ host: '127.0.0.1', port, from: 'noreply@gov.example', timeoutSeconds: 2 });
    expect(await emailAdapter.send({ to: ['a@example.org'], subject: 's', content: 'c' }, down, LOOPBACK)).toMatchObject({ kind: 'retryable' });
    expect((await emailAdapter.send({ subject: 's', content: 'c' }, config, LOOPBACK)).kind).toBe('permanent');
  });
});
