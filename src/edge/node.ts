import type { IncomingMessage, ServerResponse } from 'node:http';
import { PayloadTooLargeError } from '../errors.js';
import { jsonAnswerType } from './answer-type.js';
import type { LegacyAnswer, LegacyDoor } from '../api/legacy/legacy-door.js';
import { ClientGone, graphqlTooLargeAnswer, readBodyText } from '../http/body.js';
import { browserRefusal, type BrowserPolicy } from '../http/browser-policy.js';
import { isAsyncIterable } from '@graphql-tools/utils';
import type { ExecutionResult } from 'graphql';
import { outcomeOf, type Pipeline } from '../pipeline/pipeline.js';
import { checkedParams, jsonBodyObject } from '../pipeline/params.js';
import type { Observer } from '../pipeline/observe.js';
import type { RequestContext } from '../pipeline/request-context.js';

// The node:http edge: every plain JSON POST, legacy paths and /graphql alike, is answered here, past Yoga's fetch
// adapter (no Request/Response pair through web streams, no plugin chain asked about a path that is not theirs).
// "Plain": no Origin header (CORS and the origin rule are Yoga's), a Host the browser rules accept, a path URL parsing
// leaves as it is, and for /graphql a JSON body asking for a JSON answer. What Yoga's plugins do for such a request
// is done here with the same functions (the request's context, its access line and metrics, the cache rule), the
// operation runs on the one pipeline (src/pipeline/), and a GraphQL answer is made by Yoga's own result processor, so
// every edge answers alike (test/every-edge.test.ts). Everything else goes on to Yoga's edge (src/edge/http-server.ts).

export interface NodeEdgeOptions {
  legacy: LegacyDoor;
  pipeline: Pipeline;
  graphqlEndpoint: string;
  maxBodyBytes: number;
  browserPolicy: BrowserPolicy;
  /** Yoga's fetch API Response class. */
  Response: typeof Response;
  /** The access line and counters of every answer. */
  observer: Observer;
  /** Headers every answer made here carries (the cache rule's). */
  answerHeaders: Readonly<Record<string, string>>;
  /** Yoga's result processor for a JSON answer of the given media type. */
  answer(result: ExecutionResult, mediaType: string): Response;
  /** An answer the edge failed to make (a bug, not the caller's mistake). */
  onError(error: unknown): void;
}

// As Yoga's request parser takes a JSON body (the front door has put the media type in lower case).
const JSON_TYPE = /^application\/(graphql\+)?json(;|$)/;

/** A handler for node:http that answers what it takes and returns false for what Yoga's edge should answer. */
export function nodeEdge(options: NodeEdgeOptions): (req: IncomingMessage, res: ServerResponse, context: RequestContext) => boolean {
  const { legacy, pipeline } = options;
  const graphqlPaths = new Set([options.graphqlEndpoint, `${options.graphqlEndpoint}/`]);
  return (req, res, context) => {
    const method = context.method;
    const raw = req.url ?? '/';
    const query = raw.indexOf('?');
    const path = query === -1 ? raw : raw.slice(0, query);
    if (req.headers.origin !== undefined) return false;
    let serve: ((req: IncomingMessage, res: ServerResponse, context: RequestContext, raw: string) => Promise<void>) | undefined;
    let answerType: string | undefined;
    if (method === 'POST' && graphqlPaths.has(path)) {
      answerType = jsonAnswerType(req.headers.accept ?? null);
      if (!answerType || !JSON_TYPE.test(req.headers['content-type'] ?? '')) return false;
      const type = answerType;
      serve = (req, res, context) => serveGraphQL(req, res, context, type);
    } else if (legacy.runsCall(method, path)) {
      serve = serveLegacy;
    } else {
      return false;
    }
    if (browserRefusal(options.browserPolicy, { host: req.headers.host ?? null, origin: null })) return false;
    // A path URL parsing would change (dot segments, characters it escapes) is left to Yoga, which sees it parsed.
    if (context.path !== path) return false;
    void serve(req, res, context, raw);
    return true;
  };

  async function serveLegacy(req: IncomingMessage, res: ServerResponse, context: RequestContext, raw: string): Promise<void> {
    let answer: LegacyAnswer | undefined;
    try {
      answer = await legacy.answer({ request: context, method: context.method, path: context.path, searchParams: () => new URL(raw, 'http://localhost').searchParams, text: () => readBodyText(req, req.headers['content-length'], options.maxBodyBytes) });
    } catch (error) {
      if (error instanceof ClientGone) return; // nobody to answer
      options.onError(error);
    }
    answer ??= legacy.internalError(context.path);
    send(res, context, answer);
  }

  async function serveGraphQL(req: IncomingMessage, res: ServerResponse, context: RequestContext, answerType: string): Promise<void> {
    let response: Response;
    try {
      const outcome = await resultOf(req, context);
      response = outcome instanceof options.Response ? outcome : options.answer(outcome as ExecutionResult, answerType);
    } catch (error) {
      if (error instanceof ClientGone) return;
      if (error instanceof PayloadTooLargeError) return send(res, context, graphqlTooLargeAnswer(error));
      // An outage met on the way (the key look-up): answered as any error the pipeline masks.
      response = options.answer({ errors: [pipeline.mask(error)] }, answerType);
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => (headers[name] = value));
    send(res, context, { status: response.status, headers, body: response.body === null ? null : await response.text() });
  }

  async function resultOf(req: IncomingMessage, context: RequestContext): Promise<ExecutionResult | Response> {
    // With AUTH=on a request without a valid key is 401 before its body is read; an outage is answered below, where
    // the pipeline asks again (503).
    const refused = await context.admission().catch(() => null);
    if (refused?.kind === 'unauthenticated') return (await pipeline.admit(context))!;
    const body = jsonBodyObject(await readBodyText(req, req.headers['content-length'], options.maxBodyBytes));
    if (body instanceof Error) return { errors: [body] };
    // Then a repeated caller header, before the parameters are looked at.
    const refusedHeaders = await pipeline.admit(context);
    if (refusedHeaders) return refusedHeaders;
    const params = checkedParams(body);
    if (params instanceof Error) return { errors: [params] };
    const outcome = outcomeOf(await pipeline.handle(params, context));
    if (!isAsyncIterable(outcome)) return outcome;
    // A subscription asked for a JSON answer: Yoga's 406, naming the types a stream is answered in; the stream ends.
    await outcome[Symbol.asyncIterator]().return?.();
    return new options.Response(null, { status: 406, statusText: 'Not Acceptable', headers: { accept: 'text/event-stream; charset=utf-8, multipart/mixed' } });
  }

  function send(res: ServerResponse, context: RequestContext, answer: LegacyAnswer): void {
    const headers: Record<string, string> = { ...answer.headers, ...options.answerHeaders, ...options.observer.answered(context, answer.status, 'node:http') };
    if (answer.body !== null) headers['content-length'] = String(Buffer.byteLength(answer.body));
    else delete headers['content-length'];
    res.writeHead(answer.status, headers);
    res.end(answer.body ?? undefined);
  }
}
