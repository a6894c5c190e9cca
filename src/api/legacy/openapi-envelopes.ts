import { RPC_ERROR } from './jsonrpc.js';
import type { JsonSchema } from './answer-shape.js';
import type { ValueType } from './value-type.js';

// The parts of the OpenAPI document that are protocol, not data: the JSON-RPC 2.0 envelopes (src/api/legacy/jsonrpc.ts),
// the failure every REST error body is made from (HttpFailure), the browser-policy refusal, the security schemes,
// the headers of refusals, and the service paths that live outside the route tables.

export const FIELD_ISSUE: ValueType = {
  kind: 'object',
  name: 'FieldIssue',
  description: 'One bad input field: its path (`params.name`, `query.oid`, `body.to.0`) and what is wrong with it.',
  nullable: false,
  fields: {
    field: { type: { kind: 'scalar', schema: { type: 'string' }, nullable: false }, optional: false },
    message: { type: { kind: 'scalar', schema: { type: 'string' }, nullable: false }, optional: false },
  },
};

/** HttpFailure (src/api/legacy/http-route.ts): what an area's error body is made from. */
export const HTTP_FAILURE: ValueType = {
  kind: 'object',
  nullable: false,
  fields: {
    status: { type: { kind: 'scalar', schema: { type: 'integer' }, nullable: false }, optional: false, description: 'The HTTP status.' },
    code: {
      type: { kind: 'scalar', schema: { type: 'string' }, nullable: false },
      optional: false,
      description: 'Stable code: BAD_USER_INPUT, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, RATE_LIMITED, SERVICE_UNAVAILABLE, INTERNAL.',
    },
    message: { type: { kind: 'scalar', schema: { type: 'string' }, nullable: false }, optional: false },
    fields: { type: { kind: 'list', items: FIELD_ISSUE, nullable: false }, optional: true, description: 'Every bad input field (400).' },
  },
};

const RPC_CODES = Object.entries(RPC_ERROR);

/** Components every JSON-RPC operation refers to; FieldIssue comes with the REST error bodies. */
export function rpcComponents(fieldIssueRef: JsonSchema): Record<string, JsonSchema> {
  return {
    JsonRpcId: { description: 'The request\'s `id`, echoed; null when the request could not be read.', type: ['string', 'number', 'null'] },
    JsonRpcError: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: {
          type: 'integer',
          enum: RPC_CODES.map(([, code]) => code),
          description: `JSON-RPC 2.0 and application codes: ${RPC_CODES.map(([name, code]) => `${code} ${name}`).join(', ')}.`,
        },
        message: { type: 'string' },
        data: {
          type: 'object',
          properties: {
            code: { type: 'string', description: 'The GraphQL error code behind it (BAD_USER_INPUT, NOT_FOUND, CONFLICT, ...).' },
            fields: { type: 'array', items: fieldIssueRef, description: 'Every bad field (-32602, -32600).' },
            retryAfterSeconds: { type: 'integer', minimum: 0, description: 'Seconds to wait before retrying (-32029, -32050).' },
            requiredScopes: { type: 'array', items: { type: 'string' }, description: 'The scopes the key lacks (-32003).' },
          },
        },
      },
    },
    JsonRpcErrorResponse: {
      type: 'object',
      required: ['jsonrpc', 'id', 'error'],
      properties: { jsonrpc: { const: '2.0' }, id: { $ref: '#/components/schemas/JsonRpcId' }, error: { $ref: '#/components/schemas/JsonRpcError' } },
    },
  };
}

/** A JSON-RPC error answer whose code is known from its HTTP status. */
export function rpcErrorWithCode(code: number): JsonSchema {
  return {
    allOf: [{ $ref: '#/components/schemas/JsonRpcErrorResponse' }, { type: 'object', properties: { error: { type: 'object', properties: { code: { const: code } } } } }],
  };
}

/** The body of a request the browser policy refuses before any door sees it (a foreign Origin: 403). */
export const ORIGIN_REFUSED: JsonSchema = {
  description: 'A request from a web origin that is neither this gateway nor in CORS_ORIGINS (code FORBIDDEN_ORIGIN).',
  type: 'object',
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message', 'extensions'],
        properties: { message: { type: 'string' }, extensions: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } } },
      },
    },
  },
};

export const SECURITY_SCHEMES: JsonSchema = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (`gw_…`) as `Authorization: Bearer <key>`. Needed when the gateway runs with AUTH=on (always with DATABASE_URL); the key must carry the scope the operation names.',
  },
  apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'The same API key in the `X-Api-Key` header.' },
};

export const HEADERS: JsonSchema = {
  RetryAfter: { description: 'Seconds to wait before retrying.', required: true, schema: { type: 'integer', minimum: 0 } },
  WWWAuthenticate: { description: 'How to authenticate: an API key as a bearer token.', required: true, schema: { type: 'string', const: 'Bearer' } },
};

/** GET /healthz, /readyz and /openapi.json: public (no key even with AUTH=on), outside the route tables. */
export function servicePaths(): Record<string, JsonSchema> {
  const json = (schema: JsonSchema, description: string) => ({ description, content: { 'application/json': { schema } } });
  const readiness: JsonSchema = {
    type: 'object',
    required: ['status', 'failing', 'checks'],
    properties: {
      status: { type: 'string', enum: ['ready', 'not ready'] },
      failing: { type: 'array', items: { type: 'string' }, description: 'Failing checks: database, migrations, listener, worker:<loop>, draining.' },
      checks: { type: 'object', description: 'The state of each check, by name.' },
    },
  };
  // The browser policy stands before these doors too.
  const originRefused = json({ $ref: '#/components/schemas/OriginRefused' }, 'The request came from a web origin that is not allowed.');
  const get = (operationId: string, summary: string, responses: JsonSchema) => ({
    get: { operationId, tags: ['service'], summary, security: [], responses: { ...responses, '403': originRefused } },
  });
  return {
    '/healthz': get('healthz', 'Liveness: the process answers.', {
      '200': json({ type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }, 'The process answers.'),
    }),
    '/readyz': get('readyz', 'Readiness: database, migrations, LISTEN connection, worker loops, not draining.', {
      '200': json(readiness, 'Ready.'),
      '503': json(readiness, 'Not ready; `failing` names each failing check.'),
    }),
    '/openapi.json': get('openApi', 'This document.', { '200': json(
        {
          type: 'object',
          required: ['openapi', 'info', 'paths'],
          properties: {
            openapi: { const: '3.1.0' },
            info: { type: 'object' },
            servers: { type: 'array' },
            security: { type: 'array' },
            tags: { type: 'array' },
            paths: { type: 'object' },
            components: { type: 'object' },
          },
        },
        'The OpenAPI 3.1 document of the legacy paths (its full schema is OpenAPI 3.1\'s own).',
      ) }),
  };
}
