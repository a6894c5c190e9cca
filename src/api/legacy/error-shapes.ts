import { computed, data, leftOutWhenEmpty, named, object } from './answer-shape.js';

// The error bodies REST areas share, declared for the OpenAPI generator; each reads the failure
// `{status, code, message, fields?}` (HttpFailure) with `data`.

/** defaultErrorBody (http-route.ts): `{ error: { status, code, message, fields? } }`, the identity paths' body. */
export const DEFAULT_ERROR = named('ErrorResponse', object({ error: data() }), 'An error: its HTTP status, a stable code, a message and, for bad input, every bad field.');

/** responseError (response-error.ts): ResponseError of the notification sending (4.5) and stub (4.6) paths. */
export const RESPONSE_ERROR = named(
  'ResponseError',
  object({
    timestamp: computed({ type: 'string', format: 'date-time' }, 'When the error was answered.'),
    status: data('status'),
    error: computed({ type: 'string' }, 'The reason phrase of status (Not Found, Conflict, ...).'),
    code: data('code'),
    message: data('message'),
    fields: leftOutWhenEmpty(data('fields')),
  }),
  'ResponseError (Spring Boot error attributes plus a stable code and, for bad input, every bad field).',
);
