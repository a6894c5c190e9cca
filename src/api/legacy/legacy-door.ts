import { AppError, httpStatusOf, type FieldIssue, type ServiceUnavailableError } from '../../errors.js';
import { unavailableError } from '../../db/errors.js';
import { isJsonContentType } from '../../http/browser-policy.js';
import { callerHeaderMessage } from '../../http/caller-headers.js';
import type { RequestContext } from '../../pipeline/request-context.js';
import { hasTooDeep, storableInputIssues, toFieldIssues } from '../../validation.js';
import { executeRoute, type GraphQLRunner } from './execute.js';
import { compilePath, type HttpFailure, type HttpInput, type HttpRoute } from './http-route.js';
import { RPC_CODE_BY_GRAPHQL_CODE, RPC_ERROR, RpcFailure, parseCall, rpcError, type RpcCall, type RpcId, type RpcResponse } from './jsonrpc.js';
import { buildOpenApi } from './openapi.js';
import { insufficientScope } from '../../access/bearer-challenge.js';
import type { Unauthenticated } from '../../access/caller.js';
import { methodOf, type RouteEnv, type RpcRoute } from './route.js';

// The legacy front door: every documented path enters here, becomes one GraphQL operation and leaves in its
// area's envelope. `POST /rpc` takes any JSON-RPC method by name, and batches. It knows requests only as their method,
// path, query, headers and a way to read the body, and answers with status, headers and a JSON text: Yoga's plugin
// (src/edge/plugins/use-legacy-routes.ts) and the node:http door (src/edge/node.ts) carry it.

export interface LegacyDoorOptions {
  rpcRoutes: RpcRoute[];
  httpRoutes: HttpRoute[];
  env: RouteEnv;
  /** Calls a /rpc batch may hold (MAX_BATCH_CALLS). */
  maxBatchCalls: number;
  /** Runs a route's operation (bound late: the runner is built after Yoga). */
  runGraphQL: () => GraphQLRunner;
  /** Tracing on (src/telemetry/tracing.ts): runs each call in its span. Absent, the calls run as they are. */
  traceCall?: LegacyCallTracer | undefined;
}

/** A request at the legacy door: its context (headers, caller, id) as its edge digested it, and a way to read its body. */
export interface DoorRequest {
  request: RequestContext;
  method: string;
  path: string;
  searchParams(): URLSearchParams;
  /** The body as text; rejects with a PayloadTooLargeError (413) over MAX_BODY_BYTES. */
  text(): Promise<string>;
}

/** What the door answers: a status, headers and a JSON text (null: no body). */
export interface LegacyAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

/** One legacy call as a trace names it: the path (template) it came in on, and for JSON-RPC the method and id. */
export interface LegacyCall {
  route: string;
  method: string;
  rpc?: { method: string; id: RpcId };
  /** One call of a /rpc batch (not the request as a whole). */
  inBatch?: boolean;
}
export type LegacyCallTracer = <T extends RpcResponse | LegacyAnswer>(request: RequestContext, call: LegacyCall, run: () => Promise<T>) => Promise<T>;

export interface LegacyDoor {
  /** The answer of a legacy path; undefined when `path` is none of them (the request goes on to the other doors). */
  answer(request: DoorRequest): Promise<LegacyAnswer | undefined>;
  /** Whether a request with this method and path runs a legacy call (not a 405, not /openapi.json). */
  runsCall(method: string, path: string): boolean;
  /** The 500 of `path`'s envelope, for an answer that could not be made (a bug, never the caller's mistake). */
  internalError(path: string): LegacyAnswer;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const json = (status: number, body: unknown, headers: Record<string, string> = {}): LegacyAnswer => ({
  status,
  headers: { ...JSON_HEADERS, ...headers },
  body: body === undefined ? null : JSON.stringify(body),
});
const noContent = (): LegacyAnswer => ({ status: 204, headers: {}, body: null });

export function legacyDoor(options: LegacyDoorOptions): LegacyDoor {
  const byPath = new Map(options.rpcRoutes.map((r) => [r.path as string, r]));
  const byMethod = new Map(options.rpcRoutes.map((r) => [methodOf(r), r]));
  const httpMatchers = options.httpRoutes.map((route) => ({ route, match: compilePath(route.path) }));
  let openApi: string | undefined;

  async function runCall(request: RequestContext, call: RpcCall, route: RpcRoute | undefined): Promise<RpcResponse> {
    if (!route) {
      return rpcError(call.id, { code: RPC_ERROR.METHOD_NOT_FOUND, message: `Method not found: "${call.method}"` });
    }
    const raw = call.params === undefined && route.paramsMayComeAsResult ? call.legacyResult : call.params;
    if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) {
      const fields: FieldIssue[] = [{ field: 'params', message: 'must be an object of named parameters' }];
      return rpcError(call.id, { code: RPC_ERROR.INVALID_PARAMS, message: 'Invalid params: params must be an object', data: { fields } });
    }
    // Storable first: a value nested too deep is refused before a rule (recursive) walks it.
    const unstorable = storableInputIssues(raw, 'params');
    const parsed = hasTooDeep(unstorable) ? undefined : route.params.safeParse(raw ?? {});
    if (!parsed?.success || unstorable.length) {
      const fields = [...(parsed === undefined || parsed.success ? [] : toFieldIssues(parsed.error, 'params')), ...unstorable];
      return rpcError(call.id, {
        code: RPC_ERROR.INVALID_PARAMS,
        message: `Invalid params: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`,
        data: { fields },
      });
    }
    let outcome: Awaited<ReturnType<typeof executeRoute>>;
    try {
      outcome = await executeRoute(options.runGraphQL(), request, route, route.variables(parsed.data, options.env));
    } catch (error) {
      // Building the context (the key lookup) met an outage: this call's answer, in its own envelope.
      const unavailable = unavailableError(error);
      if (!unavailable) throw error;
      return rpcError(call.id, unavailableRpc(unavailable));
    }
    if ('error' in outcome) return rpcError(call.id, outcome.error);
    const { result, rowsCount } = route.result(outcome.data, parsed.data);
    return { jsonrpc: '2.0', id: call.id, result, ...(rowsCount !== undefined && { rowsCount }) };
  }

  async function readJson(door: DoorRequest): Promise<unknown> {
    const text = await door.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new RpcFailure({ code: RPC_ERROR.PARSE_ERROR, message: 'Parse error: the body is not valid JSON' });
    }
  }

  /** One documented path: exactly one call, whose method must name this path's operation. */
  async function handleDocumentedPath(door: DoorRequest, route: RpcRoute): Promise<LegacyAnswer> {
    try {
      const call = parseCall(await readJson(door));
      if (call.method !== methodOf(route)) {
        return json(200, rpcError(call.id, { code: RPC_ERROR.METHOD_NOT_FOUND, message: `Method "${call.method}" is not served at ${route.path}; use "${methodOf(route)}"` }));
      }
      return rpcAnswer(await runCallAt(route.path, door.request, call, route));
    } catch (error) {
      return rpcFailureAnswer(error);
    }
  }

  async function handleRpc(door: DoorRequest): Promise<LegacyAnswer> {
    const { request } = door;
    try {
      const body = await readJson(door);
      if (!Array.isArray(body)) {
        const call = parseCall(body);
        const answer = await runCallAt('/rpc', request, call, byMethod.get(call.method));
        return call.expectsAnswer ? rpcAnswer(answer) : noContent();
      }
      if (body.length === 0) throw new RpcFailure({ code: RPC_ERROR.INVALID_REQUEST, message: 'Invalid Request: empty batch' });
      if (body.length > options.maxBatchCalls) {
        throw new RpcFailure({
          code: RPC_ERROR.INVALID_REQUEST,
          message: `Invalid Request: a batch may hold at most ${options.maxBatchCalls} calls (MAX_BATCH_CALLS); this one holds ${body.length}`,
          data: { maxBatchCalls: options.maxBatchCalls },
        });
      }
      // One call after the other, yielding to the event loop between them: a batch never holds the process (the
      // embedded database runs on this thread), so /healthz and other requests are answered while it runs.
      const answers: (RpcResponse | null)[] = [];
      for (const item of body) {
        try {
          const call = parseCall(item);
          const answer = await runCallAt('/rpc', request, call, byMethod.get(call.method), true);
          answers.push(call.expectsAnswer ? answer : null);
        } catch (error) {
          if (!(error instanceof RpcFailure)) throw error;
          answers.push(rpcError(error.id, error.rpc));
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const kept = answers.filter((a): a is RpcResponse => a !== null);
      if (kept.length === 0) return noContent();
      // Only a batch that did nothing at all is safe to send again as a whole: then it is a 503; otherwise each call says.
      if (kept.every((a) => 'error' in a && a.error.code === RPC_ERROR.SERVICE_UNAVAILABLE)) return rpcAnswer(kept[0]!, kept);
      return json(200, kept);
    } catch (error) {
      return rpcFailureAnswer(error);
    }
  }

  async function handleHttp(door: DoorRequest, route: HttpRoute, pathParams: Record<string, string>): Promise<LegacyAnswer> {
    const { request } = door;
    const fail = (failure: HttpFailure, headers: Record<string, string> = {}) => json(failure.status, route.errorBody(failure), headers);
    try {
      const query: HttpInput['query'] = {};
      const searchParams = door.searchParams();
      for (const key of new Set(searchParams.keys())) {
        const all = searchParams.getAll(key);
        query[key] = all.length > 1 ? all : all[0]!;
      }
      const headers = Object.fromEntries([...request.headers.entries()].map(([k, v]) => [k.toLowerCase(), v]));
      let body: unknown;
      if (route.method !== 'GET') {
        const text = await door.text();
        if (text.trim() !== '') {
          try {
            body = JSON.parse(text);
          } catch {
            return fail({ status: 400, code: 'BAD_USER_INPUT', message: 'the body is not valid JSON', fields: [{ field: 'body', message: 'is not valid JSON' }] });
          }
        }
      }
      const input = { path: pathParams, query, headers, body };
      const unstorable = [...storableInputIssues(pathParams, 'path'), ...storableInputIssues(query, 'query'), ...storableInputIssues(body, 'body')];
      const parsed = hasTooDeep(unstorable) ? undefined : route.input.safeParse(input);
      if (!parsed?.success || unstorable.length) {
        const fields = [...(parsed === undefined || parsed.success ? [] : toFieldIssues(parsed.error)), ...unstorable];
        return fail({ status: 400, code: 'BAD_USER_INPUT', message: `Invalid request: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, fields });
      }
      const outcome = await executeRoute(options.runGraphQL(), request, route, route.variables(parsed.data, options.env));
      if ('error' in outcome) {
        const code = typeof outcome.error.data?.code === 'string' ? outcome.error.data.code : 'INTERNAL';
        const status = httpStatusOf(code);
        const retry = outcome.error.data?.retryAfterSeconds;
        const headers = challengeHeaders(status, outcome.error.data?.requiredScopes);
        if (typeof retry === 'number') headers['retry-after'] = String(retry);
        return fail(
          { status, code, message: status === 500 ? 'Unexpected error.' : outcome.error.message, ...(outcome.error.data?.fields && { fields: outcome.error.data.fields }) },
          headers,
        );
      }
      const answer = route.respond(outcome.data as never, parsed.data);
      return json(answer.status ?? 200, answer.body, answer.headers);
    } catch (error) {
      if (error instanceof AppError) return fail({ status: error.httpStatus, code: error.code, message: error.message }, error.httpStatus === 413 ? { connection: 'close' } : {});
      throw error;
    }
  }

  // Chosen once: with tracing off a call is not even asked whether it is traced.
  const traceCall = options.traceCall;
  const runCallAt: (path: string, request: RequestContext, call: RpcCall, route: RpcRoute | undefined, inBatch?: boolean) => Promise<RpcResponse> = traceCall
    ? (path, request, call, route, inBatch) => traceCall(request, { route: path, method: 'POST', rpc: { method: call.method, id: call.id }, ...(inBatch && { inBatch }) }, () => runCall(request, call, route))
    : (_path, request, call, route) => runCall(request, call, route);
  const serveHttp: typeof handleHttp = traceCall
    ? (door, route, pathParams) => traceCall(door.request, { route: route.path, method: route.method }, () => handleHttp(door, route, pathParams))
    : handleHttp;

  /** A database outage met outside a GraphQL execution (the key lookup, say) answers 503 in the path's envelope. */
  async function answerOrUnavailable(handle: () => Promise<LegacyAnswer>, envelope: (unavailable: ServiceUnavailableError) => LegacyAnswer): Promise<LegacyAnswer> {
    try {
      return await handle();
    } catch (error) {
      const unavailable = unavailableError(error);
      if (!unavailable) throw error;
      return envelope(unavailable);
    }
  }
  const rpcUnavailable = (unavailable: ServiceUnavailableError) => json(unavailable.httpStatus, rpcError(null, unavailableRpc(unavailable)), { 'retry-after': String(unavailable.retryAfterSeconds) });

  /**
   * With AUTH=on a call without a valid key is 401 before anything else about it is looked at (its method, body type,
   * body size or parameters): docs/security.md. Then `serve`. An outage met on the way is a 503 in the path's envelope.
   */
  function keyFirst(door: DoorRequest, refusals: Refusals, serve: () => Promise<LegacyAnswer>): Promise<LegacyAnswer> {
    return answerOrUnavailable(async () => {
      // The caller's verdict (src/pipeline/request-context.ts): 401 first, then a repeated X-IdpScopes, which would
      // widen the caller's view (src/http/caller-headers.ts).
      const refused = await door.request.admission();
      if (refused?.kind === 'unauthenticated') return refusals.unauthenticated(refused.why);
      if (refused) return refusals.badRequest(callerHeaderMessage(refused.issue), [refused.issue]);
      return serve();
    }, refusals.unavailable);
  }
  interface Refusals {
    unauthenticated(why: Unauthenticated): LegacyAnswer;
    badRequest(message: string, fields: FieldIssue[]): LegacyAnswer;
    unavailable(error: ServiceUnavailableError): LegacyAnswer;
  }
  const rpcRefusals: Refusals = {
    unauthenticated: ({ message, challenge }) => json(401, rpcError(null, { code: RPC_ERROR.UNAUTHENTICATED, message, data: { code: 'UNAUTHENTICATED' } }), { 'www-authenticate': challenge }),
    badRequest: (message, fields) => json(400, rpcError(null, { code: RPC_ERROR.INVALID_REQUEST, message, data: { code: 'BAD_REQUEST', fields } })),
    unavailable: rpcUnavailable,
  };
  const httpRefusals = (route: HttpRoute): Refusals => ({
    unauthenticated: ({ message, challenge }) => json(401, route.errorBody({ status: 401, code: 'UNAUTHENTICATED', message }), { 'www-authenticate': challenge }),
    badRequest: (message, fields) => json(400, route.errorBody({ status: 400, code: 'BAD_REQUEST', message, fields })),
    unavailable: (unavailable) =>
      json(unavailable.httpStatus, route.errorBody({ status: unavailable.httpStatus, code: unavailable.code, message: unavailable.message }), {
        'retry-after': String(unavailable.retryAfterSeconds),
      }),
  });

  return {
    internalError(path) {
      if (byPath.has(path) || path === '/rpc') return json(500, rpcError(null, { code: RPC_ERROR.INTERNAL_ERROR, message: 'Internal error' }));
      const failure = { status: 500, code: 'INTERNAL', message: 'Unexpected error.' };
      const route = httpMatchers.find(({ match }) => match(path) !== null)?.route;
      return json(500, route ? route.errorBody(failure) : { error: failure });
    },
    runsCall(method, path) {
      if (byPath.has(path) || path === '/rpc') return method === 'POST';
      return httpMatchers.some(({ route, match }) => route.method === method && match(path) !== null);
    },
    async answer(door) {
      const { request, path } = door;
      if (path === '/openapi.json' && door.method === 'GET') {
        openApi ??= JSON.stringify(buildOpenApi(options.rpcRoutes, options.httpRoutes));
        // The same for every caller, and changed only by a new version of the gateway: caches may keep it a while.
        return { status: 200, headers: { ...JSON_HEADERS, 'cache-control': 'public, max-age=300' }, body: openApi };
      }
      const rpcRoute = byPath.get(path);
      if (rpcRoute || path === '/rpc') {
        return keyFirst(door, rpcRefusals, async () => {
          if (door.method !== 'POST') {
            return json(405, rpcError(null, { code: RPC_ERROR.INVALID_REQUEST, message: `${path} accepts POST only` }), { allow: 'POST' });
          }
          if (!isJsonContentType(request.headers.get('content-type'))) {
            return json(415, rpcError(null, { code: RPC_ERROR.INVALID_REQUEST, message: UNSUPPORTED_MEDIA_TYPE }), { accept: 'application/json' });
          }
          return rpcRoute ? handleDocumentedPath(door, rpcRoute) : handleRpc(door);
        });
      }
      let methodMismatch: HttpRoute | undefined;
      for (const { route, match } of httpMatchers) {
        const params = match(path);
        if (!params) continue;
        if (route.method !== door.method) {
          methodMismatch ??= route;
          continue;
        }
        return keyFirst(door, httpRefusals(route), async () => {
          if (writesBody(door.method, request.headers) && !isJsonContentType(request.headers.get('content-type'))) {
            return json(415, route.errorBody({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: UNSUPPORTED_MEDIA_TYPE }), { accept: 'application/json' });
          }
          return serveHttp(door, route, params);
        });
      }
      if (methodMismatch) {
        const mismatch = methodMismatch;
        return keyFirst(door, httpRefusals(mismatch), async () => {
          const allowed = httpMatchers.filter((m) => m.match(path)).map((m) => m.route.method);
          return json(405, mismatch.errorBody({ status: 405, code: 'METHOD_NOT_ALLOWED', message: `${path} accepts ${allowed.join(', ')}` }), { allow: allowed.join(', ') });
        });
      }
      return undefined;
    },
  };
}

/**
 * Write doors take JSON only: a page may send text/plain, form-encoded or multipart POSTs to any site without a
 * preflight, so such a body must never reach an operation. A POST always counts as writing; another method only
 * when it carries a body.
 */
const UNSUPPORTED_MEDIA_TYPE = 'Unsupported Media Type: send the body as application/json';
function writesBody(method: string, headers: RequestContext['headers']): boolean {
  const length = headers.get('content-length');
  return method === 'POST' || (length !== null && length !== '0') || headers.get('transfer-encoding') !== null;
}

/** The JSON-RPC error of a call that met a database outage (-32050, with the wait it should observe). */
function unavailableRpc(unavailable: ServiceUnavailableError) {
  return { code: RPC_ERROR.SERVICE_UNAVAILABLE, message: unavailable.message, data: { code: unavailable.code, retryAfterSeconds: unavailable.retryAfterSeconds } };
}

/** Access and rate refusals and outages of a single call keep their HTTP meaning (401, 403, 429 / 503 + Retry-After); the rest is 200. */
const KEEPS_HTTP_STATUS = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE']);

/** The HTTP answer of one call (`body` given: a batch whose calls all share this answer's status). */
function rpcAnswer(answer: RpcResponse, body: RpcResponse | RpcResponse[] = answer): LegacyAnswer {
  if (!('error' in answer)) return json(200, body);
  const code = answer.error.data?.code;
  if (typeof code !== 'string' || !KEEPS_HTTP_STATUS.has(code)) return json(200, body);
  const status = httpStatusOf(code);
  const retry = answer.error.data?.retryAfterSeconds;
  const headers = challengeHeaders(status, answer.error.data?.requiredScopes);
  if (typeof retry === 'number') headers['retry-after'] = String(retry);
  return json(status, body, headers);
}

/** RFC 6750's challenge of a call's 401 or 403 (the scopes it lacks), as the HTTP answer of that one call carries it. */
function challengeHeaders(status: number, requiredScopes: unknown): Record<string, string> {
  if (status === 401) return { 'www-authenticate': 'Bearer' };
  if (status === 403 && Array.isArray(requiredScopes) && requiredScopes.length) return { 'www-authenticate': insufficientScope(requiredScopes.map(String)) };
  return {};
}

function rpcFailureAnswer(error: unknown): LegacyAnswer {
  if (error instanceof RpcFailure) return json(200, rpcError(error.id, error.rpc));
  if (error instanceof AppError && error.httpStatus === 413) {
    // The rest of the body was never read: the connection cannot carry another request.
    return json(413, rpcError(null, { code: RPC_CODE_BY_GRAPHQL_CODE[error.code] ?? RPC_ERROR.INVALID_REQUEST, message: error.message }), { connection: 'close' });
  }
  throw error;
}
