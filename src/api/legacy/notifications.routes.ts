import { z } from 'zod';
import {
  CHANNEL_ENUM,
  SEND_PATHS,
  SEND_RULES,
  fileUploads,
  idempotencyKey,
  markValidated,
  systemId,
  type SendChannel,
} from '../../notifications/notification-rules.js';
import * as op from '../../generated/graphql/graphql.js';
import { httpRoute, type HttpRoute } from './http-route.js';
import { responseError } from './response-error.js';
import { data, merge, object } from './answer-shape.js';
import { RESPONSE_ERROR } from './error-shapes.js';

// Spec 4.5: the eight sending paths, plus the upload that creates the file groups e-mails attach.

const headers = z.looseObject({ 'idempotency-key': idempotencyKey.optional() });

function sendRoute(segment: keyof typeof SEND_PATHS): HttpRoute {
  const channel: SendChannel = SEND_PATHS[segment];
  return httpRoute({
    area: 'notifications',
    method: 'POST',
    path: `/v1/systems/{systemId}/${segment}`,
    summary: `Accepts a ${segment} notification (spec 4.5) and answers at once with incomingId and one notificationResponse per delivery unit; Idempotency-Key makes a retry return the first answer.`,
    input: z.object({ path: z.strictObject({ systemId }), headers, body: SEND_RULES[channel] }),
    document: op.SendNotificationDocument,
    variables: (input) => ({
      systemId: input.path.systemId,
      channel: CHANNEL_ENUM[channel],
      request: markValidated(channel, input.body),
      idempotencyKey: input.headers['idempotency-key'] ?? null,
    }),
    respond: (data) => ({ body: data.sendNotification }),
    errorBody: responseError,
    answer: { body: data('sendNotification'), refusals: [409], error: RESPONSE_ERROR },
  });
}

export function notificationRoutes(): HttpRoute[] {
  return [
    ...(Object.keys(SEND_PATHS) as (keyof typeof SEND_PATHS)[]).map(sendRoute),
    httpRoute({
      area: 'notifications',
      method: 'POST',
      path: '/v1/systems/{systemId}/files',
      summary: 'Uploads files (base64 in JSON) as one group; its id is the fileGroupId of an e-mail.',
      input: z.object({ path: z.strictObject({ systemId }), body: z.strictObject({ files: fileUploads }) }),
      document: op.CreateFileGroupDocument,
      variables: (input) => ({ systemId: input.path.systemId, files: input.body.files }),
      respond: (data) => ({ status: 201, body: { fileGroupId: data.createFileGroup.id, ...data.createFileGroup } }),
      errorBody: responseError,
      answer: { status: 201, body: merge(object({ fileGroupId: data('createFileGroup', 'id') }), data('createFileGroup')), error: RESPONSE_ERROR },
    }),
  ];
}
