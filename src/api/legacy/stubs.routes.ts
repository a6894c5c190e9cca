import { z } from 'zod';
import type { Config } from '../../config.js';
import {
  CHANNEL_ENUM,
  externalIdList,
  notificationStatus,
  stubPageRule,
  stubType,
  systemId,
  uuid,
  uuidList,
} from '../../notifications/notification-rules.js';
import * as op from '../../generated/graphql/graphql.js';
import { httpRoute, type HttpRoute } from './http-route.js';
import { responseError } from './response-error.js';
import { data, each, merge, named, object, relabel } from './answer-shape.js';
import { RESPONSE_ERROR } from './error-shapes.js';

// Spec 4.6: the six stub paths. Lists answer the page response of 2.6; errors are ResponseError.

const CHANNEL_BY_ENUM = new Map<string, string>(Object.entries(CHANNEL_ENUM).map(([channel, name]) => [name, channel]));
const list = (value: string) => value.split(',').map((v) => v.trim()).filter(Boolean);
const arrayParam = (value: string | string[] | undefined) => (value === undefined ? undefined : (Array.isArray(value) ? value : [value]).flatMap(list));
const numberOrKeep = (v: unknown) => (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v);

/** Query strings become numbers where the page rule wants them; the rule itself lives in notification-rules.ts. */
function numericPage<S extends z.ZodType>(shape: S) {
  return z.preprocess((q) => {
    if (!q || typeof q !== 'object') return q;
    const query = q as Record<string, unknown>;
    return { ...query, pageNumber: numberOrKeep(query.pageNumber), pageSize: numberOrKeep(query.pageSize) };
  }, shape);
}

function toPage(page: op.StubPageFragment) {
  return {
    ...page,
    content: page.content.map((n) => ({ ...n, channel: CHANNEL_BY_ENUM.get(n.channel) ?? n.channel })),
  };
}

/** What toPage makes of the page at `root`, for the OpenAPI document. */
function pageShape(root: string) {
  const notification = named('StubNotificationResponseDto', merge(data(), object({ channel: relabel(data('channel'), CHANNEL_BY_ENUM) })));
  return named('PageResponseStubNotificationDto', merge(data(root), object({ content: each(data(root, 'content'), notification) })));
}

export function stubRoutes(config: Config): HttpRoute[] {
  const ids = z.string().transform(list).pipe(uuidList);
  const externalIds = z.string().transform(list).pipe(externalIdList);
  const rule = stubPageRule(config.MAX_PAGE_SIZE, config.DEFAULT_PAGE_SIZE);
  const listQuery = numericPage(rule);
  const targetQuery = numericPage(rule.omit({ status: true }).extend({ status: notificationStatus }));
  return [
    httpRoute({
      area: 'stubs',
      method: 'GET',
      path: '/v1/type/{type}/ids/{ids}',
      summary: 'Notifications of a type by their ids (comma-separated), as a page.',
      input: z.object({ path: z.strictObject({ type: stubType, ids }), query: listQuery }),
      document: op.StubNotificationsDocument,
      variables: ({ path, query }) => ({ type: path.type, ids: path.ids, ...query }),
      respond: (data) => ({ body: toPage(data.stubNotifications) }),
      errorBody: responseError,
      answer: { body: pageShape('stubNotifications'), error: RESPONSE_ERROR },
    }),
    httpRoute({
      area: 'stubs',
      method: 'PUT',
      path: '/v1/type/{type}/ids/{ids}',
      summary: 'Changes the status of the listed notifications (all or none; 409 for a move not allowed) and returns them as a page.',
      input: z.object({ path: z.strictObject({ type: stubType, ids }), query: targetQuery }),
      document: op.ChangeNotificationStatusDocument,
      variables: ({ path, query }) => ({ type: path.type, ids: path.ids, ...query }),
      respond: (data) => ({ body: toPage(data.changeNotificationStatus) }),
      errorBody: responseError,
      answer: { body: pageShape('changeNotificationStatus'), refusals: [404, 409], error: RESPONSE_ERROR },
    }),
    httpRoute({
      area: 'stubs',
      method: 'GET',
      path: '/v1/type/{type}/id/{id}/attachments',
      summary: 'The attachments of a notification (StubAttachmentDto[], data = base64 chunks), optionally only attachmentIds.',
      input: z.object({
        path: z.strictObject({ type: stubType, id: uuid }),
        query: z.strictObject({ attachmentIds: z.union([z.string(), z.array(z.string())]).transform(arrayParam).pipe(uuidList).optional() }),
      }),
      document: op.StubNotificationAttachmentsDocument,
      variables: ({ path, query }) => ({ type: path.type, id: path.id, attachmentIds: query.attachmentIds ?? null }),
      respond: (data) => ({ body: data.stubNotificationAttachments }),
      errorBody: responseError,
      answer: { body: each(data('stubNotificationAttachments'), named('StubAttachmentDto', data())), refusals: [404], error: RESPONSE_ERROR },
    }),
    httpRoute({
      area: 'stubs',
      method: 'GET',
      path: '/v1/type/{type}',
      summary: 'Notifications of a type, as a page.',
      input: z.object({ path: z.strictObject({ type: stubType }), query: listQuery }),
      document: op.StubNotificationsDocument,
      variables: ({ path, query }) => ({ type: path.type, ...query }),
      respond: (data) => ({ body: toPage(data.stubNotifications) }),
      errorBody: responseError,
      answer: { body: pageShape('stubNotifications'), error: RESPONSE_ERROR },
    }),
    httpRoute({
      area: 'stubs',
      method: 'GET',
      path: '/v1/systems/{systemId}/type/{type}/incomingId/{incomingId}',
      summary: 'Notifications of a type from one request (incomingId), as a page.',
      input: z.object({ path: z.strictObject({ systemId, type: stubType, incomingId: uuid }), query: listQuery }),
      document: op.StubNotificationsDocument,
      variables: ({ path, query }) => ({ type: path.type, systemId: path.systemId, incomingId: path.incomingId, ...query }),
      respond: (data) => ({ body: toPage(data.stubNotifications) }),
      errorBody: responseError,
      answer: { body: pageShape('stubNotifications'), error: RESPONSE_ERROR },
    }),
    httpRoute({
      area: 'stubs',
      method: 'GET',
      path: '/v1/systems/{systemId}/type/{type}/externalIds/{externalIds}',
      summary: "Notifications of a type by the provider's message ids (comma-separated), as a page.",
      input: z.object({ path: z.strictObject({ systemId, type: stubType, externalIds }), query: listQuery }),
      document: op.StubNotificationsDocument,
      variables: ({ path, query }) => ({ type: path.type, systemId: path.systemId, externalIds: path.externalIds, ...query }),
      respond: (data) => ({ body: toPage(data.stubNotifications) }),
      errorBody: responseError,
      answer: { body: pageShape('stubNotifications'), error: RESPONSE_ERROR },
    }),
  ];
}
