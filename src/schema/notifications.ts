import type { Prisma } from '../generated/prisma/client.js';
import { builder } from './builder.js';
import { assertSystemAccess, boundSystemId } from '../access/principal.js';
import { ActivityMinuteRef, activityArgs, activityWindow, defineConnection, dropNulls, pageArgs, toConnection, validate, windowFromArgs } from './common.js';
import { deliveryActivity } from '../db/sql/deliveryActivity.js';
import type { GraphQLContext } from './context.js';
import { parseChannelConfig, type AdapterChannelName } from '../channels/index.js';
import { ValidationError } from '../errors.js';
import { liveState } from '../events/live.js';
import * as notifications from '../notifications/notifications.js';
import { isFinalStatus } from '../notifications/notification-rules.js';
import { formatDuration, retrySteps } from '../kit/retry-schedule.js';
import {
  CHANNEL_ENUM,
  NOTIFICATION_STATUSES,
  SEND_RULES,
  errorText,
  externalIdList,
  fileUploads,
  idempotencyKey,
  isValidated,
  stubPageRule,
  stubType,
  systemId as systemIdRule,
  uuid,
  uuidList,
  type NotificationStatus,
  type SendChannel,
} from '../notifications/notification-rules.js';

// Area F (sending) and area G (stubs): types, queries, mutations and the status subscription.

const CHANNEL_DESCRIPTIONS: Record<SendChannel, string> = {
  webhook: 'An HTTP request to a URL of the caller (path /webhook).',
  chatA: 'A Telegram Bot API sendMessage (path /webhook-chatA).',
  chatB: 'A Mattermost incoming-webhook post (path /webhook-chatB).',
  sms: 'One SMS per phone number over SMPP (path /sms).',
  push: 'One FCM message per device token, topic or condition (path /push).',
  general: 'An in-app notification stored for reading through the stub paths (path /general).',
  gaps: 'An HTTP POST to the portal (path /gaps).',
  email: 'A letter over SMTP, or one per addressee with sendSeparate (path /email).',
};

const NotificationChannel = builder.enumType('NotificationChannel', {
  description: 'The channel a notification is sent through.',
  values: Object.fromEntries(
    (Object.entries(CHANNEL_ENUM) as [SendChannel, string][]).map(([channel, name]) => [name, { value: channel, description: CHANNEL_DESCRIPTIONS[channel] }]),
  ) as Record<string, { value: SendChannel; description: string }>,
});

const STATUS_DESCRIPTIONS: Record<NotificationStatus, string> = {
  PENDING: 'Accepted, waiting for its time (sendAfter) or for a retry.',
  SENDING: 'Leased by a delivery worker that is sending it now.',
  DELIVERED: 'The channel accepted it (general: stored in-app and unread).',
  FAILED: 'Gave up: a permanent refusal or every attempt spent; lastError says why.',
  EXPIRED: 'sendBefore passed before it could be sent; never sent.',
  CANCELLED: 'Cancelled through the status change before it was sent.',
  READ: 'Marked as read by its reader.',
  ARCHIVED: 'Put away by its reader.',
};

const NotificationStatusEnum = builder.enumType('NotificationStatus', {
  description: 'Where a notification (one delivery unit) stands; allowed changes are in docs/api.md (Notification statuses).',
  values: Object.fromEntries(NOTIFICATION_STATUSES.map((s) => [s, { description: STATUS_DESCRIPTIONS[s] }])) as Record<NotificationStatus, { description: string }>,
});

export const NotificationRef = builder.prismaObject('Notification', {
  description: 'One delivery unit of an accepted sending request (StubNotificationResponseDto).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Identifier of this unit (uuid).' }),
    incomingId: t.exposeString('incomingId', { description: 'Identifier shared by the units of one request (uuid).' }),
    systemId: t.exposeString('systemId', { description: 'The calling system.' }),
    channel: t.field({ type: NotificationChannel, description: 'The channel it is sent through.', resolve: (n) => n.channel as SendChannel }),
    type: t.exposeString('type', { description: 'The channel name, or the type of a general notification.' }),
    externalId: t.exposeString('externalId', { nullable: true, description: "The provider's id of the delivered message, when it gives one." }),
    recipient: t.exposeString('recipient', { description: 'Phone number, device token, addressee(s), chat or URL.' }),
    payload: t.field({ type: 'JSON', description: 'The message as the channel sends it.', resolve: (n) => n.payload }),
    reportForm: t.field({ type: 'JSON', nullable: true, description: 'Print template parameters given with the request.', resolve: (n) => n.reportForm }),
    fileGroupId: t.exposeString('fileGroupId', { nullable: true, description: 'Uploaded files attached to the e-mail.' }),
    status: t.field({ type: NotificationStatusEnum, description: 'Current status.', resolve: (n) => n.status as NotificationStatus }),
    flag: t.exposeString('flag', { description: 'Priority code: URGENT, HIGH, NORMAL or LOW.' }),
    sendAfter: t.expose('sendAfter', { type: 'DateTime', nullable: true, description: 'Not sent before this instant.' }),
    sendBefore: t.expose('sendBefore', { type: 'DateTime', nullable: true, description: 'Expires unsent after this instant.' }),
    attempts: t.exposeInt('attempts', { description: 'Delivery attempts made so far.' }),
    maxAttempts: t.exposeInt('maxAttempts', { description: 'Attempts allowed before FAILED.' }),
    lastError: t.exposeString('lastError', { nullable: true, description: 'Why the last attempt failed, or why it is FAILED or EXPIRED.' }),
    createTime: t.expose('createTime', { type: 'DateTime', description: 'When it was accepted.' }),
    updateTime: t.expose('updateTime', { type: 'DateTime', description: 'When its status last changed.' }),
    deliveredTime: t.expose('deliveredTime', { type: 'DateTime', nullable: true, description: 'When the channel accepted it.' }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description:
        'While PENDING, when its next attempt may start: sendAfter, or the end of the wait its retry schedule set after a failed attempt (DELIVERY_RETRY_SCHEDULE or the system\'s own, see setRetrySchedule); null in any other status.',
      resolve: (n) => (n.status === 'PENDING' ? n.availableAt : null),
    }),
  }),
});

const NotificationConnection = defineConnection('Notification', NotificationRef, 'notification unit');

const NotificationFilterInput = builder.inputType('NotificationFilter', {
  description: 'Conditions a notification unit must meet; all given conditions apply.',
  fields: (t) => ({
    systemId: t.string({ description: 'The calling system equals this.' }),
    status: t.field({ type: NotificationStatusEnum, description: 'Status equals this.' }),
    channel: t.field({ type: NotificationChannel, description: 'Channel equals this.' }),
    incomingId: t.string({ description: 'The units of this request.' }),
    errorContains: t.string({ description: "The last attempt's error contains this text, in any case." }),
    updatedAfter: t.field({ type: 'DateTime', description: 'Changed at or after this instant (for FAILED units: failed since).' }),
  }),
});

const NotificationResponseRef = builder.objectRef<notifications.NotificationResponse>('NotificationResponse').implement({
  description: 'One stored delivery unit of an accepted request.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Identifier of the unit (uuid).' }),
    recipient: t.exposeString('recipient', { description: 'Phone number, device token, addressee, chat or URL.' }),
    status: t.exposeString('status', { description: 'Status when accepted (PENDING).' }),
  }),
});

const SendResultRef = builder.objectRef<notifications.SendResult>('SendNotificationResult').implement({
  description: 'The answer to a sending request.',
  fields: (t) => ({
    incomingId: t.exposeID('incomingId', { description: 'Identifier of the accepted request (uuid).' }),
    notificationResponses: t.field({ type: [NotificationResponseRef], description: 'One entry per delivery unit.', resolve: (r) => r.notificationResponses }),
  }),
});

const StubPageRef = builder.objectRef<notifications.StubPage>('StubNotificationPage').implement({
  description: 'A page of notifications (PageResponseStubNotificationDto).',
  fields: (t) => ({
    totalElements: t.exposeInt('totalElements', { description: 'Number of matching notifications across all pages.' }),
    pageSize: t.exposeInt('pageSize', { description: 'Page size used.' }),
    currentPage: t.exposeInt('currentPage', { description: 'This page number, from 0.' }),
    totalPages: t.exposeInt('totalPages', { description: 'Number of pages.' }),
    content: t.field({ type: [NotificationRef], description: 'The notifications of this page.', resolve: (p) => p.content }),
    sortBy: t.exposeString('sortBy', { description: 'The sort field used.' }),
    order: t.exposeString('order', { description: 'ASC or DESC.' }),
  }),
});

const StubAttachmentRef = builder.objectRef<notifications.StubAttachment>('StubAttachment').implement({
  description: 'A file attached to a notification (StubAttachmentDto).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The notification id.' }),
    attachmentId: t.exposeID('attachmentId', { description: 'The file id.' }),
    filename: t.exposeString('filename', { description: 'File name.' }),
    data: t.exposeStringList('data', { description: 'The content in base64, in chunks of at most 65536 characters; concatenate them.' }),
  }),
});

const SystemChannelRef = builder.prismaObject('SystemChannel', {
  description: 'That a channel is configured for a system (the settings themselves hold secrets and are not shown).',
  fields: (t) => ({
    systemId: t.exposeString('systemId', { description: 'The calling system.' }),
    channel: t.field({ type: NotificationChannel, description: 'The channel.', resolve: (c) => c.channel as SendChannel }),
    updateTime: t.expose('updateTime', { type: 'DateTime', description: 'When the settings were last set.' }),
  }),
});

builder.prismaObject('RetrySchedule', {
  description: "A system's own retry schedule, in place of the gateway's default (DELIVERY_RETRY_SCHEDULE): for one channel, or for all of its channels.",
  fields: (t) => ({
    systemId: t.exposeString('systemId', { description: 'The calling system.' }),
    channel: t.field({
      type: NotificationChannel,
      nullable: true,
      description: "The channel it applies to; null: every channel of the system that has no schedule of its own.",
      resolve: (r) => (r.channel === notifications.ALL_CHANNELS ? null : (r.channel as SendChannel)),
    }),
    schedule: t.stringList({
      description: 'The waits before the 2nd, 3rd, ... attempt ("5s", "30m", "2h"), each jittered by 20 %; once spent, a failing unit is FAILED. Empty: no retry.',
      resolve: (r) => r.scheduleMs.map(formatDuration),
    }),
    updateTime: t.expose('updateTime', { type: 'DateTime', description: 'When it was last set.' }),
  }),
});

const StoredFileRef = builder.prismaObject('StoredFile', {
  description: 'An uploaded file.',
  select: { id: true, filename: true, contentType: true, size: true },
  fields: (t) => ({
    id: t.exposeID('id', { description: 'File id (uuid).' }),
    filename: t.exposeString('filename', { description: 'File name.' }),
    contentType: t.exposeString('contentType', { description: 'MIME type.' }),
    size: t.exposeInt('size', { description: 'Size in bytes.' }),
  }),
});

builder.prismaObject('FileGroup', {
  description: 'Files uploaded together; give its id as fileGroupId of an e-mail.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The fileGroupId (uuid).' }),
    systemId: t.exposeString('systemId', { description: 'The system that uploaded it.' }),
    createTime: t.expose('createTime', { type: 'DateTime', description: 'When it was uploaded.' }),
    files: t.relation('files', { description: 'Its files.' }),
  }),
});
void StoredFileRef;

const FileUploadInput = builder.inputType('FileUploadInput', {
  description: 'One file to upload.',
  fields: (t) => ({
    filename: t.string({ required: true, description: 'File name, without slashes.' }),
    contentType: t.string({ description: 'MIME type (default application/octet-stream).' }),
    data: t.string({ required: true, description: 'The content in base64.' }),
  }),
});

const pageArgsOf = (t: { arg: Parameters<Parameters<typeof builder.queryFields>[0]>[0]['arg'] }) => ({
  pageNumber: t.arg.int({ description: 'Page number from 0 (default 0).' }),
  pageSize: t.arg.int({ description: 'Page size (default DEFAULT_PAGE_SIZE, at most MAX_PAGE_SIZE).' }),
  sortBy: t.arg.string({ description: 'createTime (default), updateTime, status, priority, sendAfter, deliveredTime, recipient or type.' }),
  order: t.arg.string({ description: 'ASC or DESC (default DESC).' }),
});

function pageOf(ctx: GraphQLContext, args: Record<string, unknown>) {
  return validate(stubPageRule(ctx.config.MAX_PAGE_SIZE, ctx.config.DEFAULT_PAGE_SIZE), dropNulls(args));
}

function idempotencyKeyOf(ctx: GraphQLContext, argument: string | null | undefined): string | undefined {
  const header = ctx.headers?.get('idempotency-key') ?? undefined;
  const key = argument ?? header;
  return key === undefined ? undefined : validate(idempotencyKey, key, 'idempotencyKey');
}

builder.queryFields((t) => ({
  stubNotifications: t.field({
    type: StubPageRef,
    extensions: { scope: 'notifications:read' },
    description: 'Notifications of a type, narrowed by ids, by system and incomingId, or by system and external ids; a page at a time.',
    args: {
      type: t.arg.string({ required: true, description: 'The channel name or general type.' }),
      ids: t.arg.stringList({ description: 'Notification ids.' }),
      systemId: t.arg.string({ description: 'The calling system.' }),
      incomingId: t.arg.string({ description: 'The request identifier.' }),
      externalIds: t.arg.stringList({ description: "Provider's message ids." }),
      status: t.arg({ type: NotificationStatusEnum, description: 'Only this status.' }),
      ...pageArgsOf(t),
    },
    resolve: (_root, args, ctx) => {
      const { type, ids, systemId, incomingId, externalIds, ...page } = args;
      const issues: { field: string; message: string }[] = [];
      const check = <T>(fn: () => T): T | undefined => {
        try {
          return fn();
        } catch (error) {
          if (error instanceof ValidationError) issues.push(...error.issues);
          return undefined;
        }
      };
      const filter = {
        type: check(() => validate(stubType, type, 'type'))!,
        ids: ids ? check(() => validate(uuidList, ids, 'ids')) : undefined,
        systemId: systemId != null ? check(() => validate(systemIdRule, systemId, 'systemId')) : undefined,
        incomingId: incomingId != null ? check(() => validate(uuid, incomingId, 'incomingId')) : undefined,
        externalIds: externalIds ? check(() => validate(externalIdList, externalIds, 'externalIds')) : undefined,
      };
      const window = check(() => pageOf(ctx, page));
      if (issues.length) throw new ValidationError(issues);
      // A key bound to a system reads that system's notifications only.
      if (filter.systemId !== undefined) assertSystemAccess(ctx, filter.systemId);
      filter.systemId ??= boundSystemId(ctx) ?? undefined;
      return notifications.findStubNotifications(ctx.db, filter, window!);
    },
  }),
  notifications: t.field({
    type: NotificationConnection,
    extensions: { scope: 'notifications:read' },
    description: 'Delivery units of every channel and type by system, status, channel or request, newest request first with its units together, a page at a time.',
    args: { filter: t.arg({ type: NotificationFilterInput, description: 'Conditions on the units.' }), ...pageArgs(t.arg) },
    resolve: async (_root, args, ctx, info) => {
      const given = dropNulls(args.filter) as notifications.UnitFilter;
      const filter: notifications.UnitFilter = {
        ...given,
        ...(given.systemId !== undefined && { systemId: validate(systemIdRule, given.systemId, 'filter.systemId') }),
        ...(given.incomingId !== undefined && { incomingId: validate(uuid, given.incomingId, 'filter.incomingId') }),
        ...(given.errorContains !== undefined && { errorContains: validate(errorText, given.errorContains, 'filter.errorContains') }),
      };
      // A key bound to a system reads that system's units only.
      if (filter.systemId !== undefined) assertSystemAccess(ctx, filter.systemId);
      filter.systemId ??= boundSystemId(ctx) ?? undefined;
      return toConnection(await notifications.findNotificationUnits(ctx.db, filter, windowFromArgs(ctx, args, info)));
    },
  }),
  deliveryActivity: t.field({
    type: [ActivityMinuteRef],
    extensions: { scope: 'notifications:read' },
    description: "Notification units delivered and given up (FAILED, EXPIRED) in each of the last minutes, oldest minute first, zeros included; a system-bound key sees its system's.",
    args: activityArgs(t.arg),
    resolve: (_root, args, ctx) => deliveryActivity(ctx.db, activityWindow(args.minutes), boundSystemId(ctx)),
  }),
  stubNotificationAttachments: t.field({
    type: [StubAttachmentRef],
    extensions: { scope: 'notifications:read' },
    description: 'The files attached to a notification (its e-mail file group), optionally only the given ones.',
    args: {
      type: t.arg.string({ required: true, description: 'The channel name or general type.' }),
      id: t.arg.string({ required: true, description: 'The notification id.' }),
      attachmentIds: t.arg.stringList({ description: 'Only these file ids.' }),
    },
    resolve: (_root, args, ctx) =>
      notifications.findStubAttachments(
        ctx.db,
        validate(stubType, args.type, 'type'),
        validate(uuid, args.id, 'id'),
        args.attachmentIds ? validate(uuidList, args.attachmentIds, 'attachmentIds') : undefined,
        boundSystemId(ctx),
      ),
  }),
  retrySchedules: t.prismaField({
    type: ['RetrySchedule'],
    extensions: { scope: 'admin:all' },
    description: "A system's own retry schedules (the channels without one, if none for all channels, follow DELIVERY_RETRY_SCHEDULE).",
    args: { systemId: t.arg.string({ required: true, description: 'The calling system.' }) },
    resolve: (query, _root, args, ctx) =>
      ctx.db.retrySchedule.findMany({ ...query, where: { systemId: validate(systemIdRule, args.systemId, 'systemId') }, orderBy: { channel: 'asc' } }),
  }),
  systemChannels: t.prismaField({
    type: ['SystemChannel'],
    extensions: { scope: 'admin:all' },
    description: 'The channels configured for a system.',
    args: { systemId: t.arg.string({ required: true, description: 'The calling system.' }) },
    resolve: (query, _root, args, ctx) =>
      ctx.db.systemChannel.findMany({ ...query, where: { systemId: validate(systemIdRule, args.systemId, 'systemId') }, orderBy: { channel: 'asc' } }),
  }),
}));

builder.mutationFields((t) => ({
  sendNotification: t.field({
    type: SendResultRef,
    extensions: { scope: 'notifications:send' },
    description:
      'Accepts a notification for sending (the body of the matching spec 4.5 path) and answers at once; delivery follows. With an idempotency key (argument or Idempotency-Key header) a retried request returns the first answer.',
    args: {
      systemId: t.arg.string({ required: true, description: 'The calling system.' }),
      channel: t.arg({ type: NotificationChannel, required: true, description: 'The channel.' }),
      request: t.arg({ type: 'JSON', required: true, description: 'The body of the spec 4.5 path of the channel.' }),
      idempotencyKey: t.arg.string({ description: 'Same key, same body: the first answer again; same key, other body: CONFLICT.' }),
    },
    resolve: (_root, args, ctx) => {
      const systemId = validate(systemIdRule, args.systemId, 'systemId');
      // A REST body was validated by the same rule at the edge (the same object reaches here: JSON is parsed as is).
      const request = isValidated(args.channel, args.request) ? args.request : validate(SEND_RULES[args.channel], args.request, 'request');
      assertSystemAccess(ctx, systemId);
      return notifications.acceptNotifications(ctx.db, systemId, args.channel, request as never, {
        idempotencyKey: idempotencyKeyOf(ctx, args.idempotencyKey),
        idempotencyTtlMs: ctx.config.IDEMPOTENCY_TTL_SECONDS * 1000,
        maxAttempts: ctx.config.DELIVERY_RETRY_SCHEDULE.length + 1,
        outbound: ctx.outbound,
      });
    },
  }),
  changeNotificationStatus: t.field({
    type: StubPageRef,
    extensions: { scope: 'notifications:write' },
    description: 'Moves the listed notifications of a type to a status, all or none (CONFLICT for a move not allowed), and returns them as a page.',
    args: {
      type: t.arg.string({ required: true, description: 'The channel name or general type.' }),
      ids: t.arg.stringList({ required: true, description: 'Notification ids.' }),
      status: t.arg({ type: NotificationStatusEnum, required: true, description: 'The new status.' }),
      ...pageArgsOf(t),
    },
    resolve: async (_root, args, ctx) => {
      const { type, ids, status, ...page } = args;
      const systemId = boundSystemId(ctx) ?? undefined;
      const filter = { type: validate(stubType, type, 'type'), ids: validate(uuidList, ids, 'ids'), systemId };
      const window = pageOf(ctx, page);
      await notifications.changeNotificationStatus(ctx.db, filter.type, filter.ids, status, systemId ?? null);
      return notifications.findStubNotifications(ctx.db, filter, window);
    },
  }),
  resendNotification: t.prismaField({
    type: NotificationRef,
    extensions: { scope: 'notifications:write' },
    description: 'Sends a FAILED notification unit again: PENDING, its attempts and error reset, taken by the delivery worker at once. Any other status is a CONFLICT that changes nothing.',
    args: { id: t.arg.id({ required: true, description: 'The unit.' }) },
    resolve: (_query, _root, args, ctx) => notifications.resendNotification(ctx.db, validate(uuid, String(args.id), 'id'), boundSystemId(ctx)),
  }),
  setSystemChannel: t.prismaField({
    type: 'SystemChannel',
    extensions: { scope: 'admin:all' },
    description: "Sets a system's settings of a channel (SMTP server, SMPP account, bot token, webhook URL, FCM service account, ...).",
    args: {
      systemId: t.arg.string({ required: true, description: 'The calling system.' }),
      channel: t.arg({ type: NotificationChannel, required: true, description: 'The channel (not GENERAL: it needs none).' }),
      config: t.arg({ type: 'JSON', required: true, description: 'The settings, as the channel config schema in src/channels/ defines them.' }),
    },
    resolve: (_query, _root, args, ctx) => {
      const systemId = validate(systemIdRule, args.systemId, 'systemId');
      if (args.channel === 'general') throw new ValidationError([{ field: 'channel', message: 'GENERAL needs no settings' }]);
      const parsed = parseChannelConfig(args.channel as AdapterChannelName, args.config);
      if (!parsed.ok) throw new ValidationError([{ field: 'config', message: parsed.message }]);
      return notifications.setSystemChannel(ctx.db, systemId, args.channel as AdapterChannelName, args.config as Prisma.InputJsonValue, ctx.outbound);
    },
  }),
  setRetrySchedule: t.prismaField({
    type: 'RetrySchedule',
    nullable: true,
    extensions: { scope: 'admin:all' },
    description:
      "Sets how a system's failed deliveries are retried, in place of DELIVERY_RETRY_SCHEDULE: the waits before each further attempt. Units accepted from then on get that many attempts plus one; units already accepted keep their number of attempts and wait as the schedule in force says. Answers the schedule, or null when it was removed.",
    args: {
      systemId: t.arg.string({ required: true, description: 'The calling system.' }),
      channel: t.arg({ type: NotificationChannel, description: 'The channel; absent: every channel of the system that has no schedule of its own.' }),
      schedule: t.arg.stringList({
        description: 'The waits, such as ["5s", "5m", "30m", "2h"] (each 1ms to 7d, at most 50; [] retries nothing). Absent or null: removes the schedule, the default applies again.',
      }),
    },
    resolve: (_query, _root, args, ctx) => {
      const systemId = validate(systemIdRule, args.systemId, 'systemId');
      const scheduleMs = args.schedule ? validate(retrySteps, args.schedule, 'schedule') : null;
      return notifications.setRetrySchedule(ctx.db, systemId, args.channel ?? null, scheduleMs);
    },
  }),
  createFileGroup: t.prismaField({
    type: 'FileGroup',
    extensions: { scope: 'notifications:send' },
    description: 'Uploads files as one group; give its id as fileGroupId of an e-mail to attach them.',
    args: {
      systemId: t.arg.string({ required: true, description: 'The calling system.' }),
      files: t.arg({ type: [FileUploadInput], required: true, description: 'The files.' }),
    },
    resolve: (_query, _root, args, ctx) => {
      const systemId = validate(systemIdRule, args.systemId, 'systemId');
      assertSystemAccess(ctx, systemId);
      return notifications.createFileGroup(ctx.db, systemId, validate(fileUploads, args.files.map((f) => dropNulls(f)), 'files'));
    },
  }),
}));

builder.subscriptionFields((t) => ({
  notificationStatusChanged: t.prismaField({
    type: ['Notification'],
    extensions: { scope: 'notifications:read' },
    description:
      'The units of a request each time one of them changes status, in any gateway process. Completes once every unit is in a final status (DELIVERED, FAILED, EXPIRED, CANCELLED, READ, ARCHIVED), sent at once when they already are; a later stub status change (READ, ARCHIVED) needs a new subscription.',
    args: { incomingId: t.arg.string({ required: true, description: 'The request identifier.' }) },
    subscribe: (_root, args, ctx) => {
      const incomingId = validate(uuid, args.incomingId, 'incomingId');
      const systemId = boundSystemId(ctx);
      return liveState(ctx.bus, 'notification', incomingId, {
        // Callers bound to a system see its units only: they share a feed with the callers of the same system.
        variant: systemId ?? '',
        read: () =>
          ctx.db.notification.findMany({
            where: { incomingId, ...(systemId !== null && { systemId }) },
            orderBy: [{ createTime: 'asc' }, { id: 'asc' }],
          }),
        isFinal: (units) => units.length > 0 && units.every((unit) => isFinalStatus(unit.status)),
      });
    },
    resolve: (_query, units) => units,
  }),
}));
