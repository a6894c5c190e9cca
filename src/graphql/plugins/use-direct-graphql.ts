import { createLRUCache, processRegularResult, type Plugin } from 'graphql-yoga';
import { parse, type DocumentNode, type ExecutionResult, type GraphQLError } from 'graphql';
import type { OperationRunner } from '../run-operation.js';
import { selectedOperation } from './operation.js';
import { remadeRequest } from './remade-request.js';
import { callerHeaderIssue } from '../../http/caller-headers.js';

// The common GraphQL request (a JSON POST to /graphql with one query or mutation that parses and validates, asking
// for a JSON answer) runs on the legacy paths' operation runner (src/graphql/run-operation.ts): the same context,
// guards, compiled execution, metrics and masking as through Yoga's envelop, without its per-request plugin
// orchestra; its answer is made by Yoga's own processRegularResult, so status, headers and body are Yoga's. Anything
// else, and every request that would end in a request error (bad JSON, unknown parameters, syntax, validation, no key
// with AUTH=on), is handed on to Yoga with its body, to be answered exactly as before.

export interface DirectGraphQLOptions {
  endpoint: string;
  /** Bound late: the runner needs Yoga's logger. */
  runner: () => OperationRunner;
  /** Whether the caller may run operations at all (AUTH=on needs a valid key, checked by Yoga's onParams otherwise). */
  admits(request: Request): Promise<boolean>;
  /** The parse-time bound on bracket nesting (GRAPHQL_MAX_DEPTH), checked before parsing. */
  nestsWithinLimit(text: string): boolean;
}

interface Params {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  extensions?: Record<string, unknown> | null;
}
const PARAMS = new Set(['query', 'variables', 'operationName', 'extensions']);
const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON body that Yoga would take as one operation without complaint, or null. */
function wellFormed(text: string): Params | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(body) || typeof body.query !== 'string') return null;
  for (const key in body) if (!PARAMS.has(key)) return null;
  const { variables, operationName, extensions } = body;
  if (variables != null && !isPlainObject(variables)) return null;
  if (operationName != null && typeof operationName !== 'string') return null;
  if (extensions != null && !isPlainObject(extensions)) return null;
  return body as unknown as Params;
}

const JSON_TYPES = ['application/graphql-response+json', 'application/json'];

/**
 * The media type Yoga's result processors answer a single result with, when that is one of the JSON types (the
 * regular processor comes last in Yoga's list and the last match wins); undefined when Yoga would pick another or
 * refuse (406). The Accept header is read as Yoga reads it: utf-8 charsets only, later entries first, wildcards.
 */
export function jsonAnswerType(accept: string | null): string | undefined {
  let chosen: string | undefined;
  const asked = (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',').reverse();
  for (const entry of asked) {
    const [mediaType, ...params] = entry.split(';');
    if (!mediaType) continue;
    const charset = params.find((p) => p.includes('charset=')) ?? 'charset=utf-8';
    if (charset !== 'charset=utf-8') continue;
    const [pre, suf] = mediaType.split('/');
    for (const offered of JSON_TYPES) {
      const [offeredPre, offeredSuf] = offered.split('/');
      if ((pre === '*' || pre === offeredPre) && (suf === '*' || suf === offeredSuf)) chosen = offered;
    }
  }
  return chosen;
}

export function useDirectGraphQL(options: DirectGraphQLOptions): Plugin {
  const endpoints = new Set([options.endpoint, `${options.endpoint}/`]);
  // `document` null: the text does not parse (Yoga reports it).
  const documents = createLRUCache<{ document: DocumentNode | null }>({ max: 1000 });
  const documentOf = (query: string) => {
    let parsed = documents.get(query);
    if (!parsed) {
      try {
        parsed = { document: options.nestsWithinLimit(query) ? parse(query) : null };
      } catch {
        parsed = { document: null };
      }
      documents.set(query, parsed);
    }
    return parsed.document;
  };

  return {
    async onRequest({ request, url, setRequest, endResponse, fetchAPI }) {
      if (request.method !== 'POST' || !endpoints.has(url.pathname)) return;
      const contentType = request.headers.get('content-type');
      if (!contentType || contentType.split(';')[0]!.trim().toLowerCase() !== 'application/json') return;
      const answerType = jsonAnswerType(request.headers.get('accept'));
      if (!answerType) return;
      const text = await request.text();
      const handOn = () => setRequest(remadeRequest(fetchAPI.Request, request, text));
      const params = wellFormed(text);
      const document = params && documentOf(params.query);
      const operation = document && selectedOperation(document, params.operationName);
      const runner = options.runner();
      if (!params || !document || !operation || operation.operation === 'subscription' || !runner.isValid(document)) return handOn();
      // A key lookup that meets a database outage is answered by Yoga too (503 with Retry-After).
      if (!(await options.admits(request).catch(() => false))) return handOn();
      // So is a caller header sent more than once (src/http/caller-headers.ts: 400).
      if (callerHeaderIssue(request)) return handOn();
      let result: ExecutionResult;
      try {
        result = await runner.run(request, document, params.query, params.variables ?? {}, params.operationName ?? undefined);
      } catch (error) {
        // What Yoga does with an error thrown outside the resolvers (a guard meeting an outage): one masked error.
        result = { errors: [runner.mask(error as GraphQLError)] };
      }
      endResponse(processRegularResult(result, fetchAPI, answerType) as Response);
    },
  };
}
