import { createHash, randomUUID } from 'node:crypto';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { pushTargetsOf, type PushTarget } from '../channels/fcm.js';
import { assertChannelUrlsAllowed, type AdapterChannelName } from '../channels/index.js';
import type { OutboundPolicy } from '../http/outbound-policy.js';
import { acceptNotifications as acceptStatement, type AcceptRequest } from '../db/sql/acceptNotifications.js';
import { notifyEvent } from '../db/sql/notifyEvent.js';
import { groupCommitPer } from '../db/group-commit.js';
import { dbNow } from '../db/clock.js';
import { likeLiteral } from '../db/like.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { readPage, type Page, type Window } from '../pagination.js';
import {
  ATTACHMENT_CHUNK_CHARS,
  FLAG_PRIORITY,
  NOTIFICATION_STATUS,
  STATUS_TRANSITIONS,
  type NotificationStatus,
  type SendChannel,
  type SendRequests,
  type StubPageInput,
} from './notification-rules.js';

// Sending (spec 4.5) and the stub reads/status change (spec 4.6), over Prisma. Inputs are already validated.

export type NotificationRow = Prisma.NotificationGetPayload<object>;

export interface NotificationResponse {
  id: string;
  recipient: string;
  status: string;
}

export interface SendResult {
  incomingId: string;
  notificationResponses: NotificationResponse[];
}

interface Unit {
  recipient: string;
  type: string;
  payload: Prisma.InputJsonValue;
}

const COMMON_FIELDS = ['flag', 'sendAfter', 'sendBefore', 'reportForm'] as const;

function withoutCommon(request: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(request).filter(([k, v]) => !(COMMON_FIELDS as readonly string[]).includes(k) && v !== undefined));
}

function pushRecipient(target: PushTarget): string {
  return 'token' in target ? target.token : 'topic' in target ? `topic:${target.topic}` : `condition:${target.condition}`;
}

/** Splits a request into delivery units: one per phone number, device token/topic/condition, or letter (sendSeparate). */
export function unitsOf<K extends SendChannel>(channel: K, request: SendRequests[K]): Unit[] {
  const r = request as SendRequests[SendChannel];
  const message = withoutCommon(r);
  switch (channel) {
    case 'sms': {
      const sms = r as SendRequests['sms'];
      return [...new Set(sms.phoneNumbers)].map((phoneNumber) => ({ recipient: phoneNumber, type: channel, payload: { phoneNumber, text: sms.text } }));
    }
    case 'push': {
      const { deviceTokens, topic, condition, ...rest } = message as SendRequests['push'];
      return pushTargetsOf({ deviceTokens: [...new Set(deviceTokens ?? [])], topic, condition }).map((target) => ({
        recipient: pushRecipient(target),
        type: channel,
        payload: { ...rest, target } as Prisma.InputJsonValue,
      }));
    }
    case 'email': {
      const { to = [], cc = [], bcc = [], sendSeparate, fileGroupId: _f, ...rest } = message as SendRequests['email'];
      if (sendSeparate) {
        return [...new Set([...to, ...cc, ...bcc])].map((address) => ({ recipient: address, type: channel, payload: { ...rest, to: [address] } as Prisma.InputJsonValue }));
      }
      const letter: Record<string, unknown> = { ...rest };
      if (to.length) letter.to = to;
      if (cc.length) letter.cc = cc;
      if (bcc.length) letter.bcc = bcc;
      return [{ recipient: [...to, ...cc, ...bcc].join(', '), type: channel, payload: letter as Prisma.InputJsonValue }];
    }
    case 'webhook':
      return [{ recipient: (r as SendRequests['webhook']).url, type: channel, payload: message as Prisma.InputJsonValue }];
    case 'chatA':
      return [{ recipient: (r as SendRequests['chatA']).chatId, type: channel, payload: message as Prisma.InputJsonValue }];
    case 'chatB':
      return [{ recipient: (r as SendRequests['chatB']).channel ?? '(webhook default channel)', type: channel, payload: message as Prisma.InputJsonValue }];
    case 'gaps':
      return [{ recipient: (r as SendRequests['gaps']).from ?? 'gaps', type: channel, payload: message as Prisma.InputJsonValue }];
    case 'general': {
      const general = r as SendRequests['general'];
      return [{ recipient: general.sendCondition ? JSON.stringify(general.sendCondition) : 'in-app', type: general.type, payload: message as Prisma.InputJsonValue }];
    }
  }
  throw new Error(`no unit splitter for ${String(channel)}`);
}

function requestHash(channel: string, request: unknown): string {
  return createHash('sha256').update(channel).update('\0').update(JSON.stringify(request)).digest('hex');
}

export interface AcceptOptions {
  idempotencyKey?: string | undefined;
  /** An Idempotency-Key record older than this no longer counts, and is deleted by the next keyed request of its system. */
  idempotencyTtlMs: number;
  maxAttempts: number;
  /** Where a webhook may be sent (OUTBOUND_ALLOW). */
  outbound: OutboundPolicy;
}

/**
 * Stores a valid request as one notification per delivery unit, with its Idempotency-Key record when given, and
 * announces it so a delivery worker wakes: ONE statement (src/db/sql/acceptNotifications.ts), shared by the requests
 * that arrive while earlier statements are in flight (group commit, see acceptQueueOf). Answers once it committed.
 * A retried key returns the first answer; the same key with another body is CONFLICT.
 */
export async function acceptNotifications<K extends SendChannel>(
  db: PrismaClient,
  systemId: string,
  channel: K,
  request: SendRequests[K],
  options: AcceptOptions,
): Promise<SendResult> {
  const r = request as SendRequests[SendChannel];
  if (channel === 'webhook') options.outbound.assertAllowed((r as SendRequests['webhook']).url, 'url');
  const key = options.idempotencyKey ?? null;
  const incomingId = randomUUID();
  const now = dbNow(db);
  const sendAfter = r.sendAfter !== undefined ? new Date(r.sendAfter) : null;
  const flag = r.flag ?? 'NORMAL';
  const fileGroupId = channel === 'email' ? ((r as SendRequests['email']).fileGroupId ?? null) : null;
  const units = unitsOf(channel, request).map((unit) => ({ id: randomUUID(), type: unit.type, recipient: unit.recipient, payload: unit.payload }));
  const result: SendResult = {
    incomingId,
    notificationResponses: units.map((unit) => ({ id: unit.id, recipient: unit.recipient, status: NOTIFICATION_STATUS.PENDING })),
  };
  const hash = key !== null ? requestHash(channel, request) : '';
  const accept: AcceptRequest = {
    incomingId,
    systemId,
    channel,
    key,
    hash,
    response: key !== null ? result : null,
    fileGroupId,
    reportForm: 'reportForm' in r && r.reportForm !== undefined ? r.reportForm : null,
    flag,
    priority: FLAG_PRIORITY[flag],
    sendAfter: sendAfter?.toISOString() ?? null,
    sendBefore: r.sendBefore !== undefined ? new Date(r.sendBefore).toISOString() : null,
    availableAt: (sendAfter && sendAfter > now ? sendAfter : now).toISOString(),
    maxAttempts: options.maxAttempts,
    createTime: now.toISOString(),
    units,
  };
  const keptSince = new Date(now.getTime() - options.idempotencyTtlMs);
  for (let attempt = 1; ; attempt++) {
    const answer = await acceptQueueOf(db).submit({ request: accept, keptSince });
    switch (answer.outcome) {
      case 'accepted':
        return result;
      case 'replay':
        return answer.response as SendResult;
      case 'conflict':
        throw new ConflictError(`Idempotency-Key "${key}" was already used by system ${systemId} for a different request`);
      case 'noFileGroup':
        throw new ValidationError([{ field: 'fileGroupId', message: `no file group ${fileGroupId} was uploaded by system ${systemId}` }]);
      case 'raced': {
        // A concurrent request with the same key committed after this statement began: answer as it did.
        const earlier = await replayed(db, systemId, key!, hash, keptSince);
        if (earlier) return earlier;
        if (attempt >= 3) throw new ConflictError(`Idempotency-Key "${key}" is being used by a concurrent request of system ${systemId}; retry`);
      }
    }
  }
}

async function replayed(db: PrismaClient, systemId: string, key: string, hash: string, keptSince: Date): Promise<SendResult | undefined> {
  const record = await db.idempotencyRecord.findUnique({ where: { systemId_key: { systemId, key } } });
  if (!record || record.createTime < keptSince) return undefined;
  if (record.requestHash !== hash) {
    throw new ConflictError(`Idempotency-Key "${key}" was already used by system ${systemId} for a different request`);
  }
  return record.response as unknown as SendResult;
}

/** Requests in one acceptance statement at most (its units' JSON and the NOTIFY payloads stay small). */
const MAX_BATCH = 64;

interface Acceptance {
  request: AcceptRequest;
  keptSince: Date;
}

/**
 * Acceptances share statements (group commit, src/db/group-commit.ts), one statement in flight per process: one
 * measured best (bench:notifications, 16 connections: ~3,000/s with groups of ~3.6 requests, vs ~2,550/s and ~2 with
 * two). No two requests with the same key of a system share one (the second waits for the next).
 */
const acceptQueueOf = groupCommitPer('notification_accept', (db: PrismaClient) => ({
  maxBatch: MAX_BATCH,
  keyOf: ({ request }: Acceptance) => (request.key === null ? null : `${request.systemId}\0${request.key}`),
  // One keptSince per statement: the latest (a request is never judged by an older TTL window than its own).
  write: (batch: Acceptance[]) => acceptStatement(db, batch.map((a) => a.request), new Date(Math.max(...batch.map((a) => a.keptSince.getTime())))),
}));

// ---- Channel settings and files (admin) ----

/** Stores a system's settings of a channel (already parsed by its schema); URLs in them must be ones the gateway may call. */
export async function setSystemChannel(db: PrismaClient, systemId: string, channel: AdapterChannelName, config: Prisma.InputJsonValue, outbound: OutboundPolicy) {
  assertChannelUrlsAllowed(channel, config, outbound);
  const now = dbNow(db);
  return db.systemChannel.upsert({
    where: { systemId_channel: { systemId, channel } },
    create: { systemId, channel, config, createTime: now, updateTime: now },
    update: { config, updateTime: now },
  });
}

/** A system's own retry schedule: for one channel, or for all its channels (`channel` "*"). */
export type RetryScheduleRow = Prisma.RetryScheduleGetPayload<object>;

/** The `channel` of a schedule that covers every channel of its system. */
export const ALL_CHANNELS = '*';

/**
 * Sets (or, with null, removes: the default applies again) the waits before each retry of a system's notifications
 * on `channel`, or on every channel when it is null. Units accepted from now on get 1 + its waits attempts; units
 * already accepted keep their number of attempts and wait as the schedule in force says when they fail.
 */
export async function setRetrySchedule(db: PrismaClient, systemId: string, channel: SendChannel | null, scheduleMs: number[] | null): Promise<RetryScheduleRow | null> {
  const key = { systemId, channel: channel ?? ALL_CHANNELS };
  if (scheduleMs === null) {
    await db.retrySchedule.deleteMany({ where: key });
    return null;
  }
  const now = dbNow(db);
  return db.retrySchedule.upsert({
    where: { systemId_channel: key },
    create: { ...key, scheduleMs, createTime: now, updateTime: now },
    update: { scheduleMs, updateTime: now },
  });
}

export async function createFileGroup(
  db: PrismaClient,
  systemId: string,
  files: { filename: string; contentType?: string | undefined; data: string }[],
) {
  return db.fileGroup.create({
    data: {
      systemId,
      files: {
        create: files.map((f) => {
          const bytes = Buffer.from(f.data, 'base64');
          return { filename: f.filename, contentType: f.contentType ?? 'application/octet-stream', size: bytes.length, data: new Uint8Array(bytes) };
        }),
      },
    },
    include: { files: { select: { id: true, filename: true, contentType: true, size: true } } },
  });
}

// ---- Stub reads and the status change ----

export interface StubFilter {
  type: string;
  ids?: string[] | undefined;
  systemId?: string | undefined;
  incomingId?: string | undefined;
  externalIds?: string[] | undefined;
}

export interface StubPage {
  totalElements: number;
  pageSize: number;
  currentPage: number;
  totalPages: number;
  content: NotificationRow[];
  sortBy: string;
  order: 'ASC' | 'DESC';
}

function stubWhere(filter: StubFilter, status?: NotificationStatus): Prisma.NotificationWhereInput {
  return {
    type: filter.type,
    ...(filter.ids && { id: { in: filter.ids } }),
    ...(filter.systemId !== undefined && { systemId: filter.systemId }),
    ...(filter.incomingId !== undefined && { incomingId: filter.incomingId }),
    ...(filter.externalIds && { externalId: { in: filter.externalIds } }),
    ...(status && { status }),
  };
}

const NULLABLE_SORT_FIELDS = new Set(['sendAfter', 'deliveredTime']);

export async function findStubNotifications(db: PrismaClient, filter: StubFilter, page: StubPageInput): Promise<StubPage> {
  const where = stubWhere(filter, page.status);
  const direction = page.order === 'ASC' ? 'asc' : 'desc';
  const [totalElements, content] = await Promise.all([
    db.notification.count({ where }),
    db.notification.findMany({
      where,
      orderBy: [{ [page.sortBy]: NULLABLE_SORT_FIELDS.has(page.sortBy) ? { sort: direction, nulls: 'last' } : direction }, { id: 'asc' }] as Prisma.NotificationOrderByWithRelationInput[],
      skip: page.pageNumber * page.pageSize,
      take: page.pageSize,
    }),
  ]);
  return {
    totalElements,
    pageSize: page.pageSize,
    currentPage: page.pageNumber,
    totalPages: Math.ceil(totalElements / page.pageSize),
    content,
    sortBy: page.sortBy,
    order: page.order,
  };
}

/**
 * Moves every listed notification of the type to `status`, all or nothing: an unknown id is NOT_FOUND, a move
 * not in STATUS_TRANSITIONS is CONFLICT. Updates are conditional on the status read, so a row the worker moved
 * in between makes the whole change CONFLICT (rolled back).
 */
/** `onlySystemId` confines the change to one system's notifications (an API key bound to that system). */
export async function changeNotificationStatus(db: PrismaClient, type: string, ids: string[], status: NotificationStatus, onlySystemId: string | null = null): Promise<void> {
  await db.$transaction(async (tx) => {
    const unique = [...new Set(ids)];
    const rows = await tx.notification.findMany({
      where: { type, id: { in: unique }, ...(onlySystemId !== null && { systemId: onlySystemId }) },
      select: { id: true, status: true, incomingId: true },
    });
    const missing = unique.filter((id) => !rows.some((r) => r.id === id));
    if (missing.length) throw new NotFoundError(`no notification of type ${type} with id ${missing.join(', ')}`);
    const illegal = rows.filter((r) => r.status !== status && !STATUS_TRANSITIONS[r.status as NotificationStatus]?.includes(status));
    if (illegal.length) {
      throw new ConflictError(
        `status cannot change to ${status} from ${illegal.map((r) => `${r.status} (${r.id})`).join(', ')}; allowed: ${illegal
          .map((r) => `${r.status} -> ${STATUS_TRANSITIONS[r.status as NotificationStatus]?.join('|') || 'none'}`)
          .join(', ')}`,
      );
    }
    const moving = rows.filter((r) => r.status !== status);
    if (!moving.length) return;
    // Conditional on the status read above: a row the worker moved meanwhile makes the count differ.
    let changed = 0;
    for (const from of new Set(moving.map((r) => r.status))) {
      const batch = moving.filter((r) => r.status === from).map((r) => r.id);
      const { count } = await tx.notification.updateMany({
        where: { id: { in: batch }, status: from },
        data: {
          status,
          updateTime: dbNow(db),
          ...(status === 'PENDING' && { attempts: 0, lastError: null, availableAt: dbNow(db), lockedBy: null, lockedUntil: null }),
        },
      });
      changed += count;
    }
    if (changed !== moving.length) throw new ConflictError('a notification changed status meanwhile; read it again and retry');
    for (const incomingId of new Set(moving.map((r) => r.incomingId))) await notifyEvent(tx, 'notification', incomingId);
  });
}

/**
 * Sends a FAILED unit again: it becomes PENDING with its attempts and error reset, and the worker takes it at once
 * (the stub PUT's FAILED -> PENDING, by id alone). Any other status is a CONFLICT that changes nothing.
 */
export async function resendNotification(db: PrismaClient, id: string, onlySystemId: string | null = null): Promise<NotificationRow> {
  const unit = await db.notification.findFirst({ where: { id, ...(onlySystemId !== null && { systemId: onlySystemId }) }, select: { type: true, status: true } });
  if (!unit) throw new NotFoundError(`no notification unit with id ${id}`);
  if (unit.status !== NOTIFICATION_STATUS.FAILED) throw new ConflictError(`notification unit ${id} is ${unit.status}; only a FAILED unit is sent again`, { status: unit.status });
  await changeNotificationStatus(db, unit.type, [id], NOTIFICATION_STATUS.PENDING, onlySystemId);
  return db.notification.findUniqueOrThrow({ where: { id } });
}

export interface StubAttachment {
  id: string;
  attachmentId: string;
  filename: string;
  data: string[];
}

/** The files of the notification's file group (e-mail fileGroupId), base64 in chunks of ATTACHMENT_CHUNK_CHARS. */
export async function findStubAttachments(
  db: PrismaClient,
  type: string,
  id: string,
  attachmentIds?: string[],
  onlySystemId: string | null = null,
): Promise<StubAttachment[]> {
  const notification = await db.notification.findFirst({
    where: { id, type, ...(onlySystemId !== null && { systemId: onlySystemId }) },
    select: { id: true, fileGroupId: true },
  });
  if (!notification) throw new NotFoundError(`no notification of type ${type} with id ${id}`);
  if (!notification.fileGroupId) return [];
  const files = await db.storedFile.findMany({
    where: { groupId: notification.fileGroupId, ...(attachmentIds && { id: { in: attachmentIds } }) },
    orderBy: { filename: 'asc' },
  });
  return files.map((f) => {
    const base64 = Buffer.from(f.data).toString('base64');
    const data: string[] = [];
    for (let i = 0; i < base64.length; i += ATTACHMENT_CHUNK_CHARS) data.push(base64.slice(i, i + ATTACHMENT_CHUNK_CHARS));
    return { id: notification.id, attachmentId: f.id, filename: f.filename, data };
  });
}

/** What `notifications` narrows by; every given condition applies. */
export interface UnitFilter {
  systemId?: string;
  status?: NotificationStatus;
  channel?: SendChannel;
  incomingId?: string;
  /** The last attempt's error contains this text, any case. */
  errorContains?: string;
  /** Changed (a FAILED unit: failed) at or after this instant. */
  updatedAfter?: Date;
}

/** Delivery units of every type, newest request first and a request's units together, a page at a time. */
export async function findNotificationUnits(db: PrismaClient, filter: UnitFilter, window: Window): Promise<Page<NotificationRow>> {
  const where: Prisma.NotificationWhereInput = {
    ...(filter.systemId !== undefined && { systemId: filter.systemId }),
    ...(filter.status !== undefined && { status: filter.status }),
    ...(filter.channel !== undefined && { channel: filter.channel }),
    ...(filter.incomingId !== undefined && { incomingId: filter.incomingId }),
    ...(filter.errorContains !== undefined && { lastError: { contains: likeLiteral(filter.errorContains), mode: 'insensitive' } }),
    ...(filter.updatedAfter !== undefined && { updateTime: { gte: filter.updatedAfter } }),
  };
  return readPage(
    window,
    (skip, take) => db.notification.findMany({ where, orderBy: [{ createTime: 'desc' }, { incomingId: 'asc' }, { id: 'asc' }], skip, take }),
    () => db.notification.count({ where }),
  );
}
