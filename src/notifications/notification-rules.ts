import { z } from 'zod';
import { builtOncePerLimits } from '../validation.js';
import { objectSlot } from '../kit/object-slot.js';

// Every rule about what a sending request (spec 4.5) and a stub query (spec 4.6) may hold. The REST input
// schemas (src/api/legacy/notifications.routes.ts, src/api/legacy/stubs.routes.ts) and the GraphQL resolvers both use these.

/** Statuses of one delivery unit; transitions are in docs/api.md (Notification statuses). */
export const NOTIFICATION_STATUS = {
  PENDING: 'PENDING',
  SENDING: 'SENDING',
  DELIVERED: 'DELIVERED',
  FAILED: 'FAILED',
  EXPIRED: 'EXPIRED',
  CANCELLED: 'CANCELLED',
  READ: 'READ',
  ARCHIVED: 'ARCHIVED',
} as const;
export type NotificationStatus = keyof typeof NOTIFICATION_STATUS;
export const NOTIFICATION_STATUSES = Object.keys(NOTIFICATION_STATUS) as NotificationStatus[];

/** A record in one of these never moves again by itself (the worker is done with it). */
export const FINAL_STATUSES: readonly NotificationStatus[] = ['DELIVERED', 'FAILED', 'EXPIRED', 'CANCELLED', 'READ', 'ARCHIVED'];

/** Whether a stored status (a plain string column) is one of FINAL_STATUSES. */
export const isFinalStatus = (status: string): boolean => (FINAL_STATUSES as readonly string[]).includes(status);

/** What the stub PUT may do: from -> allowed targets. The worker's own moves (PENDING->SENDING->...) are not here. */
export const STATUS_TRANSITIONS: Readonly<Record<NotificationStatus, readonly NotificationStatus[]>> = {
  PENDING: ['CANCELLED'],
  SENDING: [],
  DELIVERED: ['READ', 'ARCHIVED'],
  READ: ['DELIVERED', 'ARCHIVED'],
  ARCHIVED: [],
  FAILED: ['PENDING'],
  EXPIRED: [],
  CANCELLED: [],
};

/** Send paths of spec 4.5: path segment -> channel name. */
export const SEND_PATHS = {
  webhook: 'webhook',
  'webhook-chatA': 'chatA',
  'webhook-chatB': 'chatB',
  sms: 'sms',
  push: 'push',
  general: 'general',
  gaps: 'gaps',
  email: 'email',
} as const;
export type SendChannel = (typeof SEND_PATHS)[keyof typeof SEND_PATHS];
export const SEND_CHANNELS = Object.values(SEND_PATHS) as SendChannel[];

/** GraphQL enum value of each channel (the REST layer uses the same names). */
export const CHANNEL_ENUM = {
  webhook: 'WEBHOOK',
  chatA: 'CHAT_A',
  chatB: 'CHAT_B',
  sms: 'SMS',
  push: 'PUSH',
  general: 'GENERAL',
  gaps: 'GAPS',
  email: 'EMAIL',
} as const satisfies Record<SendChannel, string>;

/** flag (priority code) -> claim order; URGENT is claimed first. */
export const FLAG_PRIORITY = { URGENT: 0, HIGH: 1, NORMAL: 2, LOW: 3 } as const;
export type Flag = keyof typeof FLAG_PRIORITY;

const str = (max = 4096) => z.string({ message: 'must be a string' }).max(max, `at most ${max} characters`);
const bool = z.boolean({ message: 'must be a boolean' });
const int32 = z.number({ message: 'must be an integer' }).int('must be an integer').min(-2147483648).max(2147483647);
const object = z.record(z.string(), z.unknown(), { message: 'must be a JSON object' });
const dateTime = z.iso.datetime({ offset: true, message: 'must be a date-time with a time zone, e.g. 2026-01-31T12:00:00+03:00' });
export const systemId = z.string({ message: 'must be a string' }).regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1-128 letters, digits, "_", "-", "." or ":"');
export const httpUrl = z
  .string({ message: 'must be a string' })
  .max(2048, 'at most 2048 characters')
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'must be an http:// or https:// URL');
/** International phone number: optional +, 7-15 digits; spaces, dashes and brackets allowed between digits. */
export const phoneNumber = z.string({ message: 'must be a string' }).refine((v) => {
  const digits = v.replace(/\D/g, '').length;
  return /^\+?[0-9][0-9 ()-]*[0-9]$/.test(v) && digits >= 7 && digits <= 15;
}, 'must be a phone number of 7 to 15 digits, such as +7 900 123-45-67');
export const emailAddress = z.email({ message: 'must be an e-mail address' });
export const pushImage = httpUrl.refine((v) => /\.(jpe?g|png|bmp)$/i.test(URL.canParse(v) ? new URL(v).pathname : v), 'must be the URL of a JPEG, PNG or BMP image (.jpg, .jpeg, .png or .bmp)');
export const WEBHOOK_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;
export const TIMEOUT_SECONDS = { min: 1, max: 300 } as const;

const common = {
  flag: z.enum(Object.keys(FLAG_PRIORITY) as [Flag, ...Flag[]], { message: 'must be URGENT, HIGH, NORMAL or LOW' }).optional(),
  sendAfter: dateTime.optional(),
  sendBefore: dateTime.optional(),
  reportForm: object.optional(),
};

/** sendBefore must come after sendAfter; checked even when other fields are bad, so every bad field is named at once. */
function windowOk(value: unknown): boolean {
  const v = (value ?? {}) as { sendAfter?: unknown; sendBefore?: unknown };
  if (typeof v.sendAfter !== 'string' || typeof v.sendBefore !== 'string') return true;
  const after = Date.parse(v.sendAfter);
  const before = Date.parse(v.sendBefore);
  return Number.isNaN(after) || Number.isNaN(before) || before > after;
}
const windowParams = () => ({ path: ['sendBefore'], message: 'must be after sendAfter', when: () => true });

const nameValue = z.strictObject({ name: str(256).min(1, 'must not be empty'), value: str(8192) });

const channelShapes = {
  webhook: {
    url: httpUrl,
    method: z.enum(WEBHOOK_METHODS, { message: `must be one of ${WEBHOOK_METHODS.join(', ')}` }).optional(),
    headers: z.array(nameValue, { message: 'must be an array of {name, value}' }).max(100).optional(),
    body: z.unknown().optional(),
    textFieldPath: str(512).optional(),
    timeOutSeconds: z
      .number({ message: 'must be an integer' })
      .int('must be an integer')
      .min(TIMEOUT_SECONDS.min, `must be at least ${TIMEOUT_SECONDS.min}`)
      .max(TIMEOUT_SECONDS.max, `must be at most ${TIMEOUT_SECONDS.max}`)
      .optional(),
  },
  chatA: {
    content: str(4096).min(1, 'must not be empty'),
    chatId: str(256).regex(/^(-?\d+|@[A-Za-z0-9_]{4,64})$/, 'must be a numeric chat id or @channelname'),
    messageThreadId: int32.optional(),
    replyToMessageId: int32.optional(),
    parseMode: z.enum(['HTML', 'Markdown', 'MarkdownV2'], { message: 'must be HTML, Markdown or MarkdownV2' }).optional(),
    disableWebPagePreview: bool.optional(),
    disableNotification: bool.optional(),
    protectContent: bool.optional(),
    allowSendingWithoutReply: bool.optional(),
    entities: z.array(object, { message: 'must be an array of objects' }).max(100).optional(),
    replyMarkup: z.union([object, str(10_000)], { message: 'must be an object or its JSON text' }).optional(),
  },
  chatB: {
    content: str(16_383).min(1, 'must not be empty'),
    channel: str(128).optional(),
    username: str(64).optional(),
    iconUrl: httpUrl.optional(),
    iconEmoji: str(64).optional(),
    type: str(128).refine((v) => v === '' || v.startsWith('custom_'), 'must begin with custom_ when not empty').optional(),
    attachments: z.array(object, { message: 'must be an array of objects' }).max(100).optional(),
    props: object.optional(),
  },
  sms: {
    phoneNumbers: z.array(phoneNumber, { message: 'must be an array of phone numbers' }).min(1, 'must name at least one number').max(1000),
    text: str(1600).min(1, 'must not be empty'),
  },
  push: {
    title: str(1024).optional(),
    body: str(4096).optional(),
    image: pushImage.optional(),
    data: object.optional(),
    deviceTokens: z.array(str(4096).min(1, 'must not be empty'), { message: 'must be an array of strings' }).max(1000).optional(),
    topic: str(900).regex(/^(\/topics\/)?[a-zA-Z0-9-_.~%]+$/, 'must be a topic name').optional(),
    condition: str(1024).optional(),
  },
  general: {
    type: str(128).min(1, 'must not be empty'),
    sendCondition: object.optional(),
    title: str(1024).optional(),
    content: str(65_536).optional(),
    extraNotificationData: object.optional(),
  },
  gaps: {
    from: str(256).optional(),
    sendTime: dateTime.optional(),
    gapsRequest: object,
    useSystemSettings: bool.optional(),
  },
  email: {
    to: z.array(emailAddress, { message: 'must be an array of e-mail addresses' }).max(500).optional(),
    cc: z.array(emailAddress, { message: 'must be an array of e-mail addresses' }).max(500).optional(),
    bcc: z.array(emailAddress, { message: 'must be an array of e-mail addresses' }).max(500).optional(),
    fileGroupId: z.uuid({ message: 'must be a UUID' }).optional(),
    from: emailAddress.optional(),
    displayName: str(256).optional(),
    subject: str(998).optional(),
    importance: z.enum(['HIGH', 'NORMAL', 'LOW'], { message: 'must be HIGH, NORMAL or LOW' }).optional(),
    contentType: z.enum(['HTML', 'TEXT'], { message: 'must be HTML or TEXT' }).optional(),
    content: str(1_000_000).optional(),
    sendSeparate: bool.optional(),
  },
} as const;

function requestRule<S extends z.ZodRawShape>(shape: S, extra?: (value: z.output<z.ZodObject<S>>, ctx: z.RefinementCtx) => void) {
  const rule = z.strictObject({ ...common, ...shape }).refine(windowOk, windowParams());
  return extra ? rule.superRefine((value, ctx) => extra(value as never, ctx)) : rule;
}

/** The body of each send path (spec 4.5 + the common fields of 2.5; gaps has no reportForm). */
export const SEND_RULES = {
  webhook: requestRule(channelShapes.webhook),
  chatA: requestRule(channelShapes.chatA),
  chatB: requestRule(channelShapes.chatB),
  sms: requestRule(channelShapes.sms),
  push: requestRule(channelShapes.push, (v, ctx) => {
    if (!v.deviceTokens?.length && !v.topic && !v.condition) ctx.addIssue({ code: 'custom', path: ['deviceTokens'], message: 'give deviceTokens, topic or condition' });
    if (!v.title && !v.body && !v.data) ctx.addIssue({ code: 'custom', path: ['body'], message: 'give title, body or data' });
  }),
  general: requestRule(channelShapes.general),
  gaps: z
    .strictObject({ flag: common.flag, sendAfter: common.sendAfter, sendBefore: common.sendBefore, ...channelShapes.gaps })
    .refine(windowOk, windowParams()),
  email: requestRule(channelShapes.email, (v, ctx) => {
    if (!v.to?.length && !v.cc?.length && !v.bcc?.length) ctx.addIssue({ code: 'custom', path: ['to'], message: 'give at least one addressee in to, cc or bcc' });
  }),
} as const;

export type SendRequests = { [K in SendChannel]: z.output<(typeof SEND_RULES)[K]> };

/** Bodies SEND_RULES already produced (at the REST edge), by channel: the mutation does not validate them twice. */
const validatedBodies = objectSlot<object, SendChannel>('validated as');

/** Marks `body` as the output of SEND_RULES[channel] (the rules have no transforms: validating it again is a no-op). */
export function markValidated<T extends object>(channel: SendChannel, body: T): T {
  validatedBodies.set(body, channel);
  return body;
}

/** Whether `body` is an object SEND_RULES[channel] produced in this process (see markValidated). */
export function isValidated(channel: SendChannel, body: unknown): boolean {
  return typeof body === 'object' && body !== null && validatedBodies.get(body) === channel;
}
export type SendRequest = SendRequests[SendChannel];

export const idempotencyKey = z.string({ message: 'must be a string' }).regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 visible ASCII characters');

// ---- Stub paths (spec 4.6) ----

export const STUB_SORT_FIELDS = ['createTime', 'updateTime', 'status', 'priority', 'sendAfter', 'deliveredTime', 'recipient', 'type'] as const;
export type StubSortField = (typeof STUB_SORT_FIELDS)[number];
export const notificationStatus = z.enum(NOTIFICATION_STATUSES as [NotificationStatus, ...NotificationStatus[]], {
  message: `must be one of ${NOTIFICATION_STATUSES.join(', ')}`,
});
export const stubType = z.string({ message: 'must be a string' }).regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'must be 1-128 letters, digits, "_", "-", "." or ":"');
export const uuid = z.uuid({ message: 'must be a UUID' });
/** Text searched for in a unit's last error. */
export const errorText = z.string({ message: 'must be a string' }).min(1, 'must not be empty').max(1024, 'at most 1024 characters');
export const uuidList = z.array(uuid, { message: 'must be a list of UUIDs' }).min(1, 'must name at least one id').max(500, 'at most 500 ids');
export const externalIdList = z.array(str(256).min(1), { message: 'must be a list of strings' }).min(1, 'must name at least one id').max(500, 'at most 500 ids');

export const stubPageRule = builtOncePerLimits((maxPageSize: number, defaultPageSize: number) =>
  z.strictObject({
    status: notificationStatus.optional(),
    pageNumber: z.number({ message: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').max(1_000_000).default(0),
    pageSize: z.number({ message: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(maxPageSize, `must be at most ${maxPageSize}`).default(defaultPageSize),
    sortBy: z.enum(STUB_SORT_FIELDS, { message: `must be one of ${STUB_SORT_FIELDS.join(', ')}` }).default('createTime'),
    order: z.enum(['ASC', 'DESC'], { message: 'must be ASC or DESC' }).default('DESC'),
  }),
);
export type StubPageInput = z.output<ReturnType<typeof stubPageRule>>;

export const fileUpload = z.strictObject({
  filename: str(255).min(1, 'must not be empty').regex(/^[^/\\\0]+$/, 'must not contain slashes'),
  contentType: str(255).regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type such as application/pdf').optional(),
  data: z.base64({ message: 'must be base64' }),
});
export const fileUploads = z.array(fileUpload, { message: 'must be an array of files' }).min(1, 'must hold at least one file').max(20, 'at most 20 files');

/** Bytes of one chunk of StubAttachmentDto.data (base64 text of at most 64 KiB each). */
export const ATTACHMENT_CHUNK_CHARS = 65_536;
