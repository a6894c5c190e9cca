// Real peers on loopback for the notification tests: HTTP sinks (webhook, Telegram, Mattermost, gaps, FCM + OAuth),
// an SMTP server (smtp-server) and an SMPP server (smpp).
import { createRequire } from 'node:module';
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { PDU, Server, Session } from 'smpp';
import { startSink, type Sink } from '../channels/sink.js';

const smpp = createRequire(import.meta.url)('smpp') as typeof import('smpp');

export interface Letter {
  rcptTo: string[];
  raw: string;
}

export interface Peers {
  webhook: Sink;
  telegram: Sink;
  mattermost: Sink;
  gaps: Sink;
  oauth: Sink;
  fcm: Sink;
  letters: Letter[];
  sms: { destination_addr: string; short_message: unknown }[];
  smtpPort: number;
  smppPort: number;
  privateKey: string;
  close(): Promise<void>;
}

export async function startPeers(): Promise<Peers> {
  const [webhook, telegram, mattermost, gaps, oauth, fcm] = await Promise.all([startSink(), startSink(), startSink(), startSink(), startSink(), startSink()]);
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  oauth.reply({ status: 200, body: { access_token: 'ya29.test', expires_in: 3599, token_type: 'Bearer' } });
  let fcmId = 0;
  fcm.reply(() => ({ status: 200, body: { name: `projects/demo/messages/m-${++fcmId}` } }));
  let tgId = 100;
  telegram.reply(() => ({ status: 200, body: { ok: true, result: { message_id: ++tgId } } }));
  mattermost.reply({ status: 200, body: 'ok' });
  gaps.reply({ status: 200, body: { accepted: true } });

  const letters: Letter[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        letters.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  const sms: Peers['sms'] = [];
  const sessions: Session[] = [];
  let smsId = 0;
  const smsc: Server = smpp.createServer((session: Session) => {
    sessions.push(session);
    session.on('bind_transceiver', (pdu: PDU) => session.send(pdu.response()));
    session.on('submit_sm', (pdu: PDU) => {
      sms.push({ destination_addr: String(pdu.destination_addr), short_message: pdu.short_message });
      session.send(pdu.response({ message_id: `smsc-${++smsId}` }));
    });
    session.on('enquire_link', (pdu: PDU) => session.send(pdu.response()));
    session.on('unbind', (pdu: PDU) => {
      session.send(pdu.response());
      session.close();
    });
    session.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => smsc.listen(0, '127.0.0.1', () => resolve()));
  const smppPort = (smsc.address() as AddressInfo).port;

  return {
    webhook,
    telegram,
    mattermost,
    gaps,
    oauth,
    fcm,
    letters,
    sms,
    smtpPort,
    smppPort,
    privateKey,
    async close() {
      await Promise.all([webhook, telegram, mattermost, gaps, oauth, fcm].map((s) => s.close()));
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => smsc.close(() => resolve()));
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    },
  };
}

/** Settings of every channel pointing at the peers, as setSystemChannel takes them. */
export function channelSettings(peers: Peers): Record<string, unknown> {
  return {
    CHAT_A: { botToken: '123456:TEST-token', apiBaseUrl: peers.telegram.url, timeoutSeconds: 5 },
    CHAT_B: { webhookUrl: `${peers.mattermost.url}/hooks/abc`, timeoutSeconds: 5 },
    GAPS: { url: `${peers.gaps.url}/portal/send`, headers: { Authorization: 'Bearer portal' }, timeoutSeconds: 5 },
    PUSH: {
      serviceAccount: { project_id: 'demo', client_email: 'push@demo.iam.gserviceaccount.com', private_key: peers.privateKey, token_uri: `${peers.oauth.url}/token` },
      sendEndpoint: peers.fcm.url,
      timeoutSeconds: 5,
    },
    SMS: { host: '127.0.0.1', port: peers.smppPort, systemId: 'gateway', password: 'secret', sourceAddr: 'CityHall', timeoutSeconds: 5 },
    EMAIL: { host: '127.0.0.1', port: peers.smtpPort, from: 'noreply@gov.example', fromName: 'Gateway', timeoutSeconds: 5 },
    WEBHOOK: { defaultTimeOutSeconds: 5 },
  };
}

export async function waitFor<T>(probe: () => Promise<T | undefined | false>, timeoutMs = 10_000, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
