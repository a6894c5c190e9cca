/**
 * sms channel (spec 4.5 /sms) = SMPP 3.4 submit_sm to a configured SMSC.
 * One bound transceiver session per config, reused; one submit_sm per phone number.
 */
import { createRequire } from 'node:module';
import type { PDU, PduFields, Session } from 'smpp';
import { z } from 'zod';
import { delivered, describeError, neverThrow, permanent, retryable, type ChannelAdapter, type DeliveryOutcome, type SendContext } from './types.js';

const smpp = createRequire(import.meta.url)('smpp') as typeof import('smpp');

export const smsConfigSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535).default(2775),
  systemId: z.string().min(1).max(15),
  password: z.string().max(8),
  systemType: z.string().max(12).default(''),
  /** Sender: digits (MSISDN/short code) or alphanumeric (up to 11 characters). */
  sourceAddr: z.string().min(1).max(20),
  /** Default: 5/0 (alphanumeric) when sourceAddr has letters, else 1/1 (international, ISDN). */
  sourceAddrTon: z.number().int().min(0).max(6).optional(),
  sourceAddrNpi: z.number().int().min(0).max(18).optional(),
  destAddrTon: z.number().int().min(0).max(6).default(1),
  destAddrNpi: z.number().int().min(0).max(18).default(1),
  registeredDelivery: z.boolean().default(false),
  enquireLinkSeconds: z.number().int().positive().default(30),
  /** Bind and submit_sm_resp timeout. */
  timeoutSeconds: z.number().int().positive().max(600).default(10),
});
export type SmsConfig = z.infer<typeof smsConfigSchema>;

/** One delivery unit: one phone number of the request's phoneNumbers. */
export interface SmsMessage {
  phoneNumber: string;
  text: string;
}

/** command_status values that mean "try again later" (SMPP 3.4 5.1.3). */
export const SMPP_RETRYABLE_STATUSES: ReadonlySet<number> = new Set([0x58 /* ESME_RTHROTTLED */, 0x14 /* ESME_RMSGQFUL */]);
/** Bind failures caused by wrong credentials: retrying cannot help. */
const SMPP_PERMANENT_BIND_STATUSES: ReadonlySet<number> = new Set([0x0e /* ESME_RINVPASWD */, 0x0f /* ESME_RINVSYSID */]);
const ESME_RINVBNDSTS = 0x04;
/** short_message holds at most 254 octets; longer texts go in the message_payload TLV. */
const SHORT_MESSAGE_MAX_OCTETS = 254;

type BindResult = { ok: true } | { ok: false; outcome: DeliveryOutcome };

interface SmscConnection {
  session: Session;
  ready: Promise<BindResult>;
  bound: boolean;
  closed: boolean;
  pending: Set<(outcome: DeliveryOutcome) => void>;
}

const connections = new Map<string, SmscConnection>();

function statusName(status: number): string {
  const name = Object.entries(smpp.errors).find(([, v]) => v === status)?.[0];
  return `0x${status.toString(16).padStart(2, '0')}${name ? ` ${name}` : ''}`;
}

function dropConnection(key: string, connection: SmscConnection, reason: string): void {
  if (connections.get(key) === connection) connections.delete(key);
  if (connection.closed) return;
  connection.closed = true;
  for (const fail of connection.pending) fail(retryable(reason));
  connection.pending.clear();
  connection.session.destroy();
}

function openConnection(key: string, config: SmsConfig): SmscConnection {
  const timeoutMs = config.timeoutSeconds * 1000;
  const session = smpp.connect({
    host: config.host,
    port: config.port,
    auto_enquire_link_period: config.enquireLinkSeconds * 1000,
  });
  const connection: SmscConnection = { session, ready: Promise.resolve({ ok: true }), bound: false, closed: false, pending: new Set() };
  connection.ready = new Promise<BindResult>((resolve) => {
    const timer = setTimeout(() => {
      resolve({ ok: false, outcome: retryable(`SMSC bind timeout after ${timeoutMs} ms`) });
      dropConnection(key, connection, 'SMSC bind timeout');
    }, timeoutMs);
    session.on('connect', () => {
      session.bind_transceiver(
        { system_id: config.systemId, password: config.password, system_type: config.systemType, interface_version: 0x34 },
        (pdu) => {
          clearTimeout(timer);
          if (pdu.command_status === 0) {
            connection.bound = true;
            resolve({ ok: true });
            return;
          }
          const reason = `SMSC bind_transceiver failed: ${statusName(pdu.command_status)}`;
          resolve({ ok: false, outcome: SMPP_PERMANENT_BIND_STATUSES.has(pdu.command_status) ? permanent(reason) : retryable(reason) });
          dropConnection(key, connection, reason);
        },
      );
    });
    session.on('error', (error: unknown) => {
      clearTimeout(timer);
      const reason = `SMSC connection error: ${describeError(error)}`;
      resolve({ ok: false, outcome: retryable(reason) });
      dropConnection(key, connection, reason);
    });
    session.on('close', () => {
      clearTimeout(timer);
      resolve({ ok: false, outcome: retryable('SMSC closed the connection') });
      dropConnection(key, connection, 'SMSC closed the connection');
    });
  });
  // Requests from the SMSC that need an answer.
  session.on('enquire_link', (pdu: PDU) => session.send(pdu.response()));
  session.on('deliver_sm', (pdu: PDU) => session.send(pdu.response()));
  session.on('unbind', (pdu: PDU) => {
    session.send(pdu.response());
    dropConnection(key, connection, 'SMSC unbound the session');
  });
  return connection;
}

function connectionFor(config: SmsConfig): { key: string; connection: SmscConnection } {
  const key = JSON.stringify(config);
  let connection = connections.get(key);
  if (!connection || connection.closed) {
    connection = openConnection(key, config);
    connections.set(key, connection);
  }
  return { key, connection };
}

/** Unbinds and closes every SMSC session (shutdown, tests). */
export async function closeSmsSessions(): Promise<void> {
  const all = [...connections.entries()];
  connections.clear();
  await Promise.all(
    all.map(
      ([key, connection]) =>
        new Promise<void>((resolve) => {
          if (connection.closed) return resolve();
          const done = (): void => {
            clearTimeout(timer);
            dropConnection(key, connection, 'SMS sessions closed');
            resolve();
          };
          const timer = setTimeout(done, 1000);
          if (!connection.bound || !connection.session.unbind({}, done)) done();
        }),
    ),
  );
}

function isAlphanumeric(addr: string): boolean {
  return /[^\d+]/.test(addr);
}

/** The submit_sm fields for one phone number (exported for tests and inspection). */
export function buildSubmitSm(message: SmsMessage, config: SmsConfig): PduFields {
  const alpha = isAlphanumeric(config.sourceAddr);
  const fields: PduFields = {
    source_addr_ton: config.sourceAddrTon ?? (alpha ? 5 : 1),
    source_addr_npi: config.sourceAddrNpi ?? (alpha ? 0 : 1),
    source_addr: alpha ? config.sourceAddr : config.sourceAddr.replace(/^\+/, ''),
    dest_addr_ton: config.destAddrTon,
    dest_addr_npi: config.destAddrNpi,
    destination_addr: message.phoneNumber.replace(/[\s()-]/g, '').replace(/^\+/, ''),
    registered_delivery: config.registeredDelivery ? 1 : 0,
  };
  const encoding = smpp.encodings.detect(message.text) || 'UCS2';
  const octets = smpp.encodings[encoding]?.encode(message.text).length ?? Buffer.byteLength(message.text, 'utf16le');
  if (octets > SHORT_MESSAGE_MAX_OCTETS) fields.message_payload = message.text;
  else fields.short_message = message.text;
  return fields;
}

async function sendSms(message: SmsMessage, config: SmsConfig, { signal }: SendContext): Promise<DeliveryOutcome> {
  if (signal?.aborted) return retryable(`aborted: ${describeError(signal.reason)}`);
  if (!/^\+?\d{3,20}$/.test(message.phoneNumber.replace(/[\s()-]/g, ''))) {
    return permanent(`invalid phone number "${message.phoneNumber}"`);
  }
  const { key, connection } = connectionFor(config);
  const bind = await connection.ready;
  if (!bind.ok) return bind.outcome;
  const fields = buildSubmitSm(message, config);
  return new Promise<DeliveryOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: DeliveryOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      connection.pending.delete(finish);
      resolve(outcome);
    };
    const timer = setTimeout(
      () => finish(retryable(`no submit_sm_resp within ${config.timeoutSeconds} s (the SMSC may still deliver it)`)),
      config.timeoutSeconds * 1000,
    );
    const onAbort = (): void => finish(retryable(`aborted: ${describeError(signal?.reason)}`));
    signal?.addEventListener('abort', onAbort, { once: true });
    connection.pending.add(finish);
    const written = connection.session.submit_sm(fields, (pdu) => {
      const status = pdu.command_status;
      if (status === 0) {
        const id = typeof pdu.message_id === 'string' ? pdu.message_id : undefined;
        finish(delivered('submit_sm_resp ESME_ROK', id));
      } else if (SMPP_RETRYABLE_STATUSES.has(status)) {
        finish(retryable(`submit_sm refused: ${statusName(status)}`));
      } else if (status === ESME_RINVBNDSTS) {
        finish(retryable(`submit_sm refused: ${statusName(status)}; rebinding`));
        dropConnection(key, connection, 'SMSC lost the bind');
      } else {
        finish(permanent(`submit_sm refused: ${statusName(status)}`));
      }
    });
    if (!written) {
      finish(retryable('SMSC connection not writable'));
      dropConnection(key, connection, 'SMSC connection not writable');
    }
  });
}

export const smsAdapter: ChannelAdapter<SmsConfig, SmsMessage> = {
  channel: 'sms',
  send: (message, config, context) => neverThrow(() => sendSms(message, config, context)),
};
