import { Kind, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { buildSchema } from '../../schema/schema.js';
import type { JsonSchema } from './answer-shape.js';
import { answerType } from './answer-type.js';
import type { HttpRoute } from './http-route.js';
import { RPC_ERROR } from './jsonrpc.js';
import { FIELD_ISSUE, HEADERS, HTTP_FAILURE, ORIGIN_REFUSED, SECURITY_SCHEMES, rpcComponents, rpcErrorWithCode, servicePaths } from './openapi-envelopes.js';
import { methodOf, type Area, type RpcRoute } from './route.js';
import { operationDataType } from './selection-type.js';
import { Components, toJsonSchema, type ValueType } from './value-type.js';
import { inputSchema, outputType } from './zod-schema.js';
import { projectVersion } from '../../kit/project-root.js';

// OpenAPI 3.1 of every legacy path, derived from the route tables (never written by hand): requests from the routes'
// zod rules, answers from the GraphQL types each route's document selects, passed through the route's declared
// answer (answer-shape.ts), inside the door's envelope (openapi-envelopes.ts).

const TAGS: Record<Area | 'service', string> = {
  identity: 'Spec 4.1: a person\'s data, organizations, groups and employments (ESIA).',
  scheduler: 'Spec 4.2: the job scheduler (JSON-RPC).',
  queues: 'Spec 4.3: task queues (JSON-RPC).',
  tasks: 'Spec 4.3: tasks in queues (JSON-RPC).',
  signatures: 'Spec 4.4: CMS signature verification.',
  notifications: 'Spec 4.5: notification sending and file upload.',
  stubs: 'Spec 4.6: notification stubs: reading notifications, their attachments, changing their status.',
  service: 'Liveness, readiness and this document; public, no key needed.',
};

const DESCRIPTION = [
  'The legacy REST and JSON-RPC paths of the public-services gateway; each runs one GraphQL operation of `/graphql`.',
  'Generated from the route tables in `src/api/legacy/`: answers are the GraphQL types the route\'s operation selects, as the route maps them.',
  'With AUTH=on every operation needs an API key (`Authorization: Bearer <key>` or `X-Api-Key`) that carries the scope the operation names (`admin:all` grants all).',
  'JSON-RPC paths answer HTTP 200 with `result` or `error`, except the refusals listed per operation; REST paths answer each error in their area\'s body.',
].join(' ');

const REF = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });
const RETRY_AFTER = { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } };
const WWW_AUTHENTICATE = { 'WWW-Authenticate': { $ref: '#/components/headers/WWWAuthenticate' } };

const REFUSALS: Record<number, string> = {
  400: 'Invalid input: `fields` names every bad field and what is wrong with it.',
  401: 'No valid API key or bearer token (with AUTH=on every call needs one); WWW-Authenticate says why.',
  403: 'The key or token lacks the scope the operation needs (identity: X-IdpScopes lacks what the path needs, or a person-bound token asks for another person; notifications: the caller is bound to another system), or the request came from a web origin that is not allowed.',
  404: 'Not found.',
  409: 'Conflict: the state of what the call names forbids it.',
  413: 'The body is over MAX_BODY_BYTES.',
  415: 'The body is not `application/json`.',
  429: 'Over the key\'s rate limit (RATE_LIMIT_PER_MINUTE); retry after Retry-After seconds.',
  500: 'An unexpected fault; its details are logged, never returned.',
  503: 'The database (or, for a bearer token, the OpenID provider) cannot be reached (an outage); retry after Retry-After seconds.',
};

/** A JSON-RPC path's HTTP 400: the request as a whole, not its params (those are -32602 with HTTP 200). */
const RPC_BAD_REQUEST = 'The request is refused as a whole (-32600, `data.code` BAD_REQUEST): X-IdpScopes was sent more than once; `data.fields` names it.';

function operationOf(document: DocumentNode): OperationDefinitionNode {
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (!operation) throw new Error('a route\'s document holds no operation');
  return operation;
}

/** The scopes the operation's root fields declare (src/schema: `extensions.scope`), as security requirements. */
function securityOf(schema: GraphQLSchema, document: DocumentNode): { security: JsonSchema[]; scopes: string[] } {
  const operation = operationOf(document);
  const root = schema.getRootType(operation.operation);
  const scopes = [
    ...new Set(
      operation.selectionSet.selections.flatMap((s) => {
        const scope = s.kind === Kind.FIELD ? root?.getFields()[s.name.value]?.extensions.scope : undefined;
        return typeof scope === 'string' ? [scope] : [];
      }),
    ),
  ];
  return { security: Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: scopes })), scopes };
}

function operationNote(route: { document: DocumentNode }, scopes: string[]): string {
  const name = operationOf(route.document).name?.value ?? 'anonymous';
  return `Runs the GraphQL operation \`${name}\`. ${scopes.length ? `Needs the scope ${scopes.map((s) => `\`${s}\``).join(', ')} (with AUTH=on).` : ''}`.trim();
}

class OpenApiBuilder {
  readonly components = new Components();
  private readonly schema = buildSchema();

  private dataType(document: DocumentNode): ValueType {
    return operationDataType(this.schema, document);
  }

  rpcOperation(route: RpcRoute): JsonSchema {
    const method = methodOf(route);
    const sources = { data: this.dataType(route.document), params: outputType(route.params) };
    const result = answerType(route.answer.result, sources, route.path);
    const rowsCount = route.answer.rowsCount && answerType(route.answer.rowsCount, sources, `${route.path} rowsCount`);
    const id = REF('JsonRpcId');
    const params = inputSchema(route.params);
    const success: JsonSchema = {
      type: 'object',
      required: ['jsonrpc', 'id', 'result', ...(rowsCount ? ['rowsCount'] : [])],
      properties: {
        jsonrpc: { const: '2.0' },
        id,
        result: toJsonSchema(result, this.components),
        ...(rowsCount && { rowsCount: { ...toJsonSchema(rowsCount, this.components), description: 'How many match, across all pages.' } }),
      },
    };
    const refusal = (code: number, status: number, headers?: JsonSchema) => ({
      description: REFUSALS[status]!,
      ...(headers && { headers }),
      content: json(rpcErrorWithCode(code)),
    });
    const { security, scopes } = securityOf(this.schema, route.document);
    return {
      operationId: method,
      tags: [route.area],
      summary: route.summary,
      description: `JSON-RPC method \`${method}\`. ${operationNote(route, scopes)}`,
      security,
      requestBody: {
        required: true,
        content: json({
          type: 'object',
          required: ['method'],
          properties: {
            jsonrpc: { const: '2.0' },
            method: { const: method },
            params,
            ...(route.paramsMayComeAsResult && { result: { ...params, description: 'Accepted in place of params, as the spec shows for this request.' } }),
            id,
          },
        }),
      },
      responses: {
        '200': {
          description: `\`result\`${rowsCount ? ' and `rowsCount`' : ''}, or \`error\` (bad params -32602, not found -32004, conflict -32009, ...).`,
          content: json({ oneOf: [success, REF('JsonRpcErrorResponse')] }),
        },
        '400': { description: RPC_BAD_REQUEST, content: json(rpcErrorWithCode(RPC_ERROR.INVALID_REQUEST)) },
        '401': refusal(RPC_ERROR.UNAUTHENTICATED, 401, WWW_AUTHENTICATE),
        '403': { description: REFUSALS[403]!, content: json({ oneOf: [rpcErrorWithCode(RPC_ERROR.FORBIDDEN), REF('OriginRefused')] }) },
        '413': refusal(RPC_ERROR.PAYLOAD_TOO_LARGE, 413),
        '415': refusal(RPC_ERROR.INVALID_REQUEST, 415),
        '429': refusal(RPC_ERROR.RATE_LIMITED, 429, RETRY_AFTER),
        '503': refusal(RPC_ERROR.SERVICE_UNAVAILABLE, 503, RETRY_AFTER),
      },
    };
  }

  httpOperation(route: HttpRoute): JsonSchema {
    const input = inputSchema(route.input) as { properties?: Record<string, { properties?: Record<string, JsonSchema>; required?: string[] }> };
    const parameters = (['path', 'query', 'headers'] as const).flatMap((part) => {
      const section = input.properties?.[part];
      return Object.entries(section?.properties ?? {}).map(([name, schema]) => ({
        name,
        in: part === 'headers' ? 'header' : part,
        required: part === 'path' || (section?.required ?? []).includes(name),
        schema,
      }));
    });
    const body = route.method !== 'GET' ? input.properties?.body : undefined;
    const answer = route.answer;
    const params = outputType(route.input);
    const success = answerType(answer.body, { data: this.dataType(route.document), params }, `${route.method} ${route.path}`);
    const error = toJsonSchema(answerType(answer.error, { data: HTTP_FAILURE, params }, `${route.method} ${route.path} error`), this.components);
    const headers = answer.headers && Object.fromEntries(Object.entries(answer.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]));
    const refusal = (status: number, extra: JsonSchema = {}) => [String(status), { description: REFUSALS[status]!, ...extra, content: json(error) }] as const;
    const { security, scopes } = securityOf(this.schema, route.document);
    const responses = Object.fromEntries(
      [
        [String(answer.status ?? 200), { description: 'Success.', ...(headers && { headers }), content: json(toJsonSchema(success, this.components)) }] as const,
        ...(answer.notModified ? [['304', { description: 'Not modified: If-None-Match names the current version.', ...(headers && { headers }) }] as const] : []),
        refusal(400),
        refusal(401, { headers: WWW_AUTHENTICATE }),
        ['403', { description: REFUSALS[403]!, content: json({ oneOf: [error, REF('OriginRefused')] }) }] as const,
        ...(answer.refusals ?? []).map((status) => refusal(status)),
        ...(body ? [refusal(413), refusal(415)] : []),
        refusal(429, { headers: RETRY_AFTER }),
        refusal(500),
        refusal(503, { headers: RETRY_AFTER }),
      ].sort(([a], [b]) => Number(a) - Number(b)),
    );
    return {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
      tags: [route.area],
      summary: route.summary,
      description: operationNote(route, scopes),
      security,
      ...(parameters.length && { parameters }),
      ...(body && { requestBody: { required: true, content: json(body) } }),
      responses,
    };
  }
}

export function buildOpenApi(rpcRoutes: RpcRoute[], httpRoutes: HttpRoute[]): JsonSchema {
  const builder = new OpenApiBuilder();
  const paths: Record<string, JsonSchema> = { ...servicePaths() };
  for (const route of rpcRoutes) paths[route.path] = { post: builder.rpcOperation(route) };
  for (const route of httpRoutes) paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: builder.httpOperation(route) };
  const fieldIssue = toJsonSchema(FIELD_ISSUE, builder.components);
  const schemas = { ...builder.components.schemas, ...rpcComponents(fieldIssue), OriginRefused: ORIGIN_REFUSED };
  const areas = new Set<string>([...rpcRoutes, ...httpRoutes].map((r) => r.area));
  return {
    openapi: '3.1.0',
    info: { title: 'Public-services gateway: legacy paths', version: projectVersion(), description: DESCRIPTION },
    // Relative: the paths are served by whichever origin served this document.
    servers: [{ url: '/', description: 'This gateway.' }],
    security: Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] })),
    tags: Object.entries(TAGS)
      .filter(([name]) => name === 'service' || areas.has(name))
      .map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: SECURITY_SCHEMES,
      headers: HEADERS,
    },
  };
}
