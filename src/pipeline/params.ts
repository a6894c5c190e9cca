import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLError } from 'graphql';

// The parameters of a GraphQL request (GraphQL over HTTP: query, variables, operationName, extensions), read from a
// JSON body with the very errors Yoga gives for the same body, so that a request answered on node:http
// (src/edge/node-graphql.ts) reads the same as one answered by Yoga's edge (GET, SSE, multipart).

export interface GraphQLParams {
  query: string;
  variables?: Record<string, unknown> | null | undefined;
  operationName?: string | null | undefined;
  extensions?: Record<string, unknown> | null | undefined;
}

const EXPECTED = new Set(['query', 'variables', 'operationName', 'extensions']);

const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

function badRequest(message: string, http: Record<string, unknown>, extra: Record<string, unknown> = {}): GraphQLError {
  return createGraphQLError(message, { extensions: { http, code: 'BAD_REQUEST', ...extra } });
}
const ALLOW = { Allow: 'GET, POST' };

/** The object of a JSON body, or the error Yoga answers it with (carrying its HTTP status); its parameters are checked next. */
export function jsonBodyObject(text: string): Record<string, unknown> | GraphQLError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    // Worded as Yoga's fetch API words it (@whatwg-node/node-fetch's Body.json), body included.
    const { name, message } = error as Error;
    return badRequest('POST body sent invalid JSON.', { spec: true, status: 400 }, { originalError: { name, message: error instanceof SyntaxError ? `${message}, "${text}" is not valid JSON` : message } });
  }
  if (body == null) return badRequest(`POST body is expected to be object but received ${String(body)}`, { status: 400 });
  if (typeof body !== 'object') return badRequest(`POST body is expected to be object but received ${typeof body}`, { status: 400 });
  if (Array.isArray(body)) return badRequest('Batching is not supported.', { status: 400 });
  return body as Record<string, unknown>;
}

/** An operationName that is neither absent nor a string (Yoga leaves it to the executor; here a 400 on every edge). */
export function operationNameRefusal(operationName: unknown): GraphQLError | null {
  if (operationName == null || typeof operationName === 'string') return null;
  return badRequest(`Expected "operationName" param to be a string, but given ${kindOf(operationName)}.`, { status: 400, headers: ALLOW });
}

/** Yoga's checks of the parameters' names and types (graphql-yoga's checkGraphQLQueryParams), in its order. */
export function checkedParams(params: Record<string, unknown>): GraphQLParams | GraphQLError {
  for (const name in params) {
    if (params[name] != null && !EXPECTED.has(name)) return badRequest(`Unexpected parameter "${name}" in the request body.`, { status: 400 });
  }
  if (params.query == null) return badRequest('Must provide query string.', { spec: true, status: 400, headers: ALLOW });
  if (typeof params.query !== 'string') return badRequest(`Expected "query" param to be a string, but given ${kindOf(params.query)}.`, { status: 400, headers: ALLOW });
  const refused = operationNameRefusal(params.operationName);
  if (refused) return refused;
  for (const name of ['variables', 'extensions'] as const) {
    const kind = kindOf(params[name]);
    if (kind !== 'object' && kind !== 'null' && kind !== 'undefined') {
      return badRequest(`Expected "${name}" param to be empty or an object, but given ${kind}.`, { status: 400, headers: ALLOW });
    }
  }
  return params as unknown as GraphQLParams;
}
