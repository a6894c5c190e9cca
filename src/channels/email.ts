/**
 * email channel (spec 4.5 /email) = SMTP through a pooled nodemailer transporter per config.
 * SMTP reply codes (RFC 5321 4.2.1): 5yz = permanent, 4yz = transient.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import { z } from 'zod';
import { describeError, neverThrow, permanent, retryable, delivered, type ChannelAdapter, type DeliveryOutcome, type SendContext } from './types.js';

export const emailConfigSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65535).default(587),
  /** true = implicit TLS (port 465); false = STARTTLS when offered. */
  secure: z.boolean().default(false),
  auth: z.object({ user: z.string().min(1), pass: z.string() }).optional(),
  /** Default sender address when the request has no `from`. */
  from: z.email(),
  /** Default display name of the sender. */
  fromName: z.string().optional(),
  /** Accept self-signed certificates (test relays only). */
  allowInvalidCertificates: z.boolean().default(false),
  maxConnections: z.number().int().positive().max(50).default(5),
  timeoutSeconds: z.number().int().positive().max(600).default(30),
});
export type EmailConfig = z.infer<typeof emailConfigSchema>;

export const EMAIL_IMPORTANCE = {
  HIGH: { importance: 'high', xPriority: '1' },
  NORMAL: { importance: 'normal', xPriority: '3' },
  LOW: { importance: 'low', xPriority: '5' },
} as const;

export interface EmailAttachment {
  filename: string;
  content: Buffer;
  contentType?: string;
}

/** One letter. `sendSeparate` and `fileGroupId` are resolved by the caller (split recipients, load files). */
export interface EmailMessage {
  to?: string[];
  cc?: string[];
  bcc?: string[];
  from?: string;
  displayName?: string;
  subject?: string;
  importance?: keyof typeof EMAIL_IMPORTANCE;
  contentType?: 'HTML' | 'TEXT';
  content?: string;
  attachments?: EmailAttachment[];
}

type PoolTransporter = Transporter<SMTPPool.SentMessageInfo, SMTPPool.Options>;
const transporters = new Map<string, PoolTransporter>();

function transporterFor(config: EmailConfig): PoolTransporter {
  const key = JSON.stringify(config);
  let transporter = transporters.get(key);
  if (!transporter) {
    const timeoutMs = config.timeoutSeconds * 1000;
    transporter = nodemailer.createTransport({
      pool: true,
      host: config.host,
      port: config.port,
      secure: config.secure,
      ...(config.auth ? { auth: { user: config.auth.user, pass: config.auth.pass } } : {}),
      maxConnections: config.maxConnections,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      ...(config.allowInvalidCertificates ? { tls: { rejectUnauthorized: false } } : {}),
    });
    transporters.set(key, transporter);
  }
  return transporter;
}

/** Closes every pooled SMTP connection (shutdown, tests). */
export function closeEmailTransports(): void {
  for (const transporter of transporters.values()) transporter.close();
  transporters.clear();
}
export { closeEmailTransports as close };

/** The nodemailer message for one letter (exported for inspection in tests). */
export function buildMailOptions(message: EmailMessage, config: EmailConfig): Mail.Options {
  const name = message.displayName ?? (message.from ? undefined : config.fromName);
  const address = message.from ?? config.from;
  const options: Mail.Options = {
    from: name ? { name, address } : address,
    subject: message.subject ?? '',
  };
  if (message.to?.length) options.to = message.to;
  if (message.cc?.length) options.cc = message.cc;
  if (message.bcc?.length) options.bcc = message.bcc;
  if (message.importance) {
    const { importance, xPriority } = EMAIL_IMPORTANCE[message.importance];
    options.headers = { Importance: importance, 'X-Priority': xPriority };
  }
  if (message.contentType === 'HTML') options.html = message.content ?? '';
  else options.text = message.content ?? '';
  if (message.attachments?.length) {
    options.attachments = message.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      ...(a.contentType ? { contentType: a.contentType } : {}),
    }));
  }
  return options;
}

/** SMTP failure -> outcome: reply code 5yz permanent; 4yz, connection and timeout errors retryable. */
export function classifySmtpError(error: unknown): DeliveryOutcome {
  const { responseCode, code, response } = (typeof error === 'object' && error !== null ? error : {}) as {
    responseCode?: unknown;
    code?: unknown;
    response?: unknown;
  };
  const text = typeof response === 'string' ? response : describeError(error);
  if (typeof responseCode === 'number') {
    if (responseCode >= 500 && responseCode <= 599) return permanent(`SMTP ${responseCode}: ${text}`);
    return retryable(`SMTP ${responseCode}: ${text}`);
  }
  // No reply code: nodemailer refuses the message itself (no recipients, bad address) -> permanent.
  if (code === 'EENVELOPE' || code === 'EMESSAGE') return permanent(`SMTP ${String(code)}: ${text}`);
  return retryable(`SMTP ${typeof code === 'string' ? code : 'error'}: ${describeError(error)}`);
}

async function sendEmail(message: EmailMessage, config: EmailConfig, { signal }: SendContext): Promise<DeliveryOutcome> {
  if (signal?.aborted) return retryable(`aborted: ${describeError(signal.reason)}`);
  if (!message.to?.length && !message.cc?.length && !message.bcc?.length) return permanent('no recipients');
  try {
    const info = await transporterFor(config).sendMail(buildMailOptions(message, config));
    const rejected = info.rejected.map(String);
    return delivered(
      rejected.length > 0 ? `${info.response}; rejected: ${rejected.join(', ')}` : info.response,
      info.messageId,
    );
  } catch (error) {
    return classifySmtpError(error);
  }
}

export const emailAdapter: ChannelAdapter<EmailConfig, EmailMessage> = {
  channel: 'email',
  send: (message, config, context) => neverThrow(() => sendEmail(message, config, context), classifySmtpError),
};
