import type { IncomingMessage, ServerResponse } from 'node:http';
import { PayloadTooLargeError } from '../errors.js';
import type { RequestEdge } from './plugins/use-request-id.js';
import { jsonAnswerType } from './answer-type.js';
import type { LegacyAnswer, LegacyDoor } from '../api/legacy/legacy-door.js';
import { ClientGone, graphqlTooLargeAnswer, readNodeBodyText } from '../http/body.js';
import { browserRefusal, type BrowserPolicy } from '../http/browser-policy.js';
import { noteCallerHeaders } from '../http/caller-headers.js';
import { isAsyncIterable } from '@graphql-tools/utils';
import type { ExecutionResult } from 'graphql';
import { isPrepared, type OperationRequest, type Pipeline } from '../pipeline/pipeline.js';
import { checkedParams, jsonBodyObject } from '../pipeline/params.js';

// The node:http edge: every plain JSON POST, legacy paths and /graphql alike, is answered here, past Yoga's fetch
// adapter (no Request/Response pair through web streams, no plugin chain asked about a path that is not theirs).
// "Plain": no Origin header (CORS and the origin rule are Yoga's), a Host the browser rules accept, a path URL parsing
// leaves as it is, and for /graphql a JSON body asking for a JSON answer. What Yoga's plugins do for such a request
// is done here with the same functions (request id and access line, HTTP metrics, cache policy), the operation runs
// on the one pipeline (src/pipeline/), and a GraphQL answer is made by Yoga's own result processor, so every edge
// answers alike (test/every-edge.test.ts). Everything else goes on to Yoga's edge (src/edge/yoga.ts).

/** Segments of letters, digits, `-`, `_` and `~`: URL parsing leaves such a path as it is, so it need not be asked. */
const PLAIN_PATH = /^(?:\/[\w~-]+)+\/?$/;

/** The path URL parsing makes of a request target, or undefined when it refuses the target. */
function parsedPath(raw: string): string | undefined {
  try {
    return new URL(raw, 'http://localhost').pathname;
  } catch {
    return undefined;
  }
}

export interface NodeEdgeOptions {
  legacy: LegacyDoor;
  pipeline: Pipeline;
  graphqlEndpoint: string;
  maxBodyBytes: number;
  browserPolicy: BrowserPolicy;
  /** Yoga's fetch API Request class: the operation's context reads the caller's headers from such a request. */
  Request: typeof Request;
  /** Yoga's fetch API Response class. */
  Response: typeof Response;
  /** Request id, access line, metrics and cache policy, in Yoga's plugin order. */
  edges: readonly RequestEdge[];
  /** The operation request of an HTTP request (request id, caller), made once. */
  operationRequest(request: Request): OperationRequest;
  /** AUTH=on: the 401 a /graphql request without a valid key gets before its body is read (null: it has one). */
  keyFirst?: ((request: Request) => Promise<Response | null>) | undefined;
  /** Yoga's result processor for a JSON answer of the given media type. */
  answer(result: ExecutionResult, mediaType: string): Response;
  /** An answer the edge failed to make (a bug, not the caller's mistake). */
  onError(error: unknown): void;
}

// As Yoga's request parser takes a JSON body (the front door has put the media type in lower case).
const JSON_TYPE = /^application\/(graphql\+)?json(;|$)/;

/** A handler for node:http that answers what it takes and returns false for what Yoga's edge should answer. */
export function nodeEdge(options: NodeEdgeOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { legacy, edges, pipeline } = options;
  const graphqlPaths = new Set([options.graphqlEndpoint, `${options.graphqlEndpoint}/`]);
  return (req, res) => {
    const method = req.method ?? 'GET';
    const raw = req.url ?? '/';
    const query = raw.indexOf('?');
    const path = query === -1 ? raw : raw.slice(0, query);
    if (req.headers.origin !== undefined) return false;
    let serve: ((req: IncomingMessage, res: ServerResponse, request: Request, raw: string, path: string) => Promise<void>) | undefined;
    let answerType: string | undefined;
    if (method === 'POST' && graphqlPaths.has(path)) {
      answerType = jsonAnswerType(req.headers.accept ?? null);
      if (!answerType || !JSON_TYPE.test(req.headers['content-type'] ?? '')) return false;
      const type = answerType;
      serve = (req, res, request, _raw, path) => serveGraphQL(req, res, request, path, type);
    } else if (legacy.runsCall(method, path)) {
      serve = serveLegacy;
    } else {
      return false;
    }
    if (browserRefusal(options.browserPolicy, { host: req.headers.host ?? null, origin: null })) return false;
    // A path URL parsing would change (dot segments, characters it escapes) is left to Yoga, which sees it parsed.
    if (!PLAIN_PATH.test(path) && parsedPath(raw) !== path) return false;
    const request = new options.Request(`http://${req.headers.host ?? 'localhost'}${raw}`, { method, headers: req.headers as Record<string, string> });
    noteCallerHeaders(request, req);
    for (const edge of edges) edge.begin(request);
    void serve(req, res, request, raw, path);
    return true;
  };

  async function serveLegacy(req: IncomingMessage, res: ServerResponse, request: Request, raw: string, path: string): Promise<void> {
    let answer: LegacyAnswer | undefined;
    try {
      answer = await legacy.answer({ request, method: request.method, path, searchParams: () => new URL(raw, 'http://localhost').searchParams, text: () => readNodeBodyText(req, options.maxBodyBytes) });
    } catch (error) {
      if (error instanceof ClientGone) return; // nobody to answer
      options.onError(error);
    }
    answer ??= legacy.internalError(path);
    send(res, request, path, answer);
  }

  async function serveGraphQL(req: IncomingMessage, res: ServerResponse, request: Request, path: string, answerType: string): Promise<void> {
    let response: Response;
    try {
      const refused = await options.keyFirst?.(request);
      const outcome = refused ?? (await resultOf(req, request));
      response = outcome instanceof options.Response ? outcome : options.answer(outcome as ExecutionResult, answerType);
    } catch (error) {
      if (error instanceof ClientGone) return;
      if (error instanceof PayloadTooLargeError) return send(res, request, path, graphqlTooLargeAnswer(error));
      // An outage met on the way (the key look-up): answered as any error the pipeline masks.
      response = options.answer({ errors: [pipeline.mask(error)] }, answerType);
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    send(res, request, path, { status: response.status, headers, body: response.body === null ? null : await response.text() });
  }

  async function resultOf(req: IncomingMessage, request: Request): Promise<ExecutionResult | Response> {
    const body = jsonBodyObject(await readNodeBodyText(req, options.maxBodyBytes));
    if (body instanceof Error) return { errors: [body] };
    const operation = options.operationRequest(request);
    const refused = await pipeline.callerRefusal(operation);
    if (refused) return refused;
    const params = checkedParams(body);
    if (params instanceof Error) return { errors: [params] };
    const prepared = await pipeline.prepare(params, operation);
    if (!isPrepared(prepared)) return prepared;
    const outcome = await pipeline.execute(prepared, operation);
    if (!isAsyncIterable(outcome)) return outcome;
    // A subscription asked for a JSON answer: Yoga's 406, naming the types a stream is answered in; the stream ends.
    await outcome[Symbol.asyncIterator]().return?.();
    return new options.Response(null, { status: 406, statusText: 'Not Acceptable', headers: { accept: 'text/event-stream; charset=utf-8, multipart/mixed' } });
  }

  function send(res: ServerResponse, request: Request, path: string, answer: LegacyAnswer): void {
    const headers: Record<string, string> = { ...answer.headers };
    for (const edge of edges) Object.assign(headers, edge.finish(request, path, answer.status, 'node:http'));
    if (answer.body !== null) headers['content-length'] = String(Buffer.byteLength(answer.body));
    else delete headers['content-length'];
    res.writeHead(answer.status, headers);
    res.end(answer.body ?? undefined);
  }
}
