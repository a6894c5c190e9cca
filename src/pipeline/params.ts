import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLError } from 'graphql';

// The parameters of a GraphQL request (GraphQL over HTTP: query, variables, operationName, extensions; or, instead
// of query, the documentId of a trusted document), read from a JSON body with the very errors Yoga gives for the same
// body, so that a request answered on node:http (src/edge/node.ts) reads the same as one answered by Yoga's edge (GET,
// SSE, multipart).

export interface GraphQLParams {
  /** The document's text; absent (or empty) when the request names a trusted document instead. */
  query?: string | undefined;
  /** A trusted document's id (checked by the pipeline's document step, whatever the edge: see namedDocument). */
  documentId?: unknown;
  variables?: Record<string, unknown> | null | undefined;
  operationName?: string | null | undefined;
  extensions?: Record<string, unknown> | null | undefined;
}

const EXPECTED = new Set(['query', 'documentId', 'variables', 'operationName', 'extensions']);

/** The names Yoga's own parameter check must let through (its `extraParamNames`). */
export const EXTRA_PARAM_NAMES = ['documentId'];

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

/** The parameters a GET's query string or a form-urlencoded body carries JSON in (GraphQL over HTTP). */
const JSON_PARAMETERS = ['variables', 'extensions'] as const;

/**
 * The 400 of a request whose parameters cannot be read: a GET or form-urlencoded `variables`/`extensions` that is not
 * JSON (named, from `sent`: the query string or the form), a multipart `operations`/`map` that is not what GraphQL's
 * multipart request spec asks for. An error that already carries its status (413) is returned as it is.
 */
export function unreadableParams(error: unknown, sent: URLSearchParams | undefined): GraphQLError {
  const given = error as Partial<GraphQLError> | null;
  const http = given?.extensions?.http as { status?: number } | undefined;
  if (http?.status !== undefined && given instanceof Error && 'extensions' in given) return given as GraphQLError;
  if (error instanceof SyntaxError) {
    for (const name of JSON_PARAMETERS) {
      const text = sent?.get(name);
      if (!text) continue;
      try {
        JSON.parse(text);
      } catch (parseError) {
        return badRequest(`The "${name}" parameter is not valid JSON (${(parseError as Error).message}).`, { status: 400, headers: ALLOW });
      }
    }
    return badRequest(`A parameter that must be JSON is not valid JSON (${error.message}).`, { status: 400, headers: ALLOW });
  }
  const message = given && typeof given.message === 'string' && given.message ? given.message : "The request's GraphQL parameters cannot be read.";
  return badRequest(message, { status: 400 });
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
  if (params.query == null && !namesDocument(params)) return badRequest('Must provide query string.', { spec: true, status: 400, headers: ALLOW });
  if (params.query != null && typeof params.query !== 'string') return badRequest(`Expected "query" param to be a string, but given ${kindOf(params.query)}.`, { status: 400, headers: ALLOW });
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

/** The sha256Hash of Apollo's persisted-query extension (`extensions.persistedQuery`), when one is sent. */
function persistedQueryHash(extensions: unknown): string | undefined {
  if (extensions === null || typeof extensions !== 'object') return undefined;
  const persisted = (extensions as Record<string, unknown>).persistedQuery;
  if (persisted === null || typeof persisted !== 'object') return undefined;
  const hash = (persisted as Record<string, unknown>).sha256Hash;
  return typeof hash === 'string' ? hash : undefined;
}

const hasText = (query: unknown) => query != null && query !== '';

/** Whether the parameters name a trusted document rather than send a text (then no `query` is needed). */
export function namesDocument(params: Record<string, unknown>): boolean {
  return (params.documentId != null && params.documentId !== '') || (!hasText(params.query) && persistedQueryHash(params.extensions) !== undefined);
}

/**
 * The trusted document the parameters name: `documentId`, else (with no text) Apollo's
 * `extensions.persistedQuery.sha256Hash` as the id `sha256:<hash>`; null when they send a text; or the 400 of a
 * documentId that is not a string or comes with a text. An empty `query` is no text (graphql-ws's subscribe message
 * must carry a string), an empty documentId no id (as Yoga reads an empty GET parameter).
 */
export function namedDocument(params: GraphQLParams): { id: string } | { error: GraphQLError } | null {
  const { documentId } = params;
  if (documentId == null || documentId === '') {
    const hash = hasText(params.query) ? undefined : persistedQueryHash(params.extensions);
    return hash === undefined ? null : { id: `sha256:${hash}` };
  }
  if (typeof documentId !== 'string') return { error: badRequest(`Expected "documentId" param to be a string, but given ${kindOf(documentId)}.`, { status: 400, headers: ALLOW }) };
  if (hasText(params.query)) return { error: badRequest('Send either "query" or "documentId", not both.', { status: 400, headers: ALLOW }) };
  return { id: documentId };
}
