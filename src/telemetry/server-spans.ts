import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { context, createContextKey, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { SpanStarter } from './recording-span.js';

// The HTTP server span of every request, started where node:http hands the request over (src/edge/http-server.ts
// wraps its one request listener with `traceRequests`) and ended when the answer is sent or the client is gone. The
// gateway's own, instead of @opentelemetry/instrumentation-http: that one patches node:http's Server.prototype.emit,
// binds the request's and the response's event emitters to the context and sets some twenty attributes one by one,
// a large part of what tracing cost a small request (docs/performance.md). The attributes are the stable HTTP
// semantic conventions' required ones and two recommended ones (the caller's address and user agent; not the address
// and port the caller named the gateway by); the query string is not recorded (`url.query` can hold a GraphQL
// document's variables).
// A W3C `traceparent` from the caller (OTEL_PROPAGATORS) makes the span its child.

/**
 * The span the request's operation is recorded on (src/telemetry/tracing.ts): the server span, or a batch call's.
 * `taken` once an operation is recorded there (a second one gets a span of its own). `server`: the request's server
 * span, which a legacy call names after its route and which carries the request's id. `requestId`: the request's id,
 * put here once the legacy call or the operation knows it, for every span started under it. Kept here rather than
 * under keys of their own, the context is made once per request (each key set copies it, and a context set for a
 * call's run costs an async context frame).
 */
export const OPERATION_CARRIER = createContextKey('gateway operation carrier span');
export interface OperationCarrier {
  span: Span;
  readonly server: Span | undefined;
  taken: boolean;
  requestId: string | undefined;
}

/** The methods semantic conventions name as they are; any other is `_OTHER`, the method kept beside it. */
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE']);

export interface ServerSpanOptions {
  startSpan: SpanStarter;
  /** Paths asked every few seconds (health, readiness, scrapes) that get no span. */
  untracedPaths: ReadonlySet<string>;
  /** Paths whose route is known from the path alone (`/graphql`). */
  routes: ReadonlySet<string>;
  /**
   * The header the answer carries the request's id in, recorded on the span when the answer is sent with it set as a
   * header (Yoga's edge); the node:http edge writes its headers at once, and the operation's hooks record the id.
   */
  requestIdHeader: string;
  requestIdAttribute: string;
}

export function serverSpans(options: ServerSpanOptions): (listener: RequestListener) => RequestListener {
  const { startSpan, untracedPaths, routes, requestIdHeader, requestIdAttribute } = options;
  // The headers the configured propagators read (traceparent, tracestate, baggage): most requests carry none of them.
  const fields = propagation.fields();
  const carriesContext = (headers: IncomingMessage['headers']) => fields.some((field) => headers[field] !== undefined);
  return (listener) =>
    function tracedRequest(this: unknown, req: IncomingMessage, res: ServerResponse) {
      const target = req.url ?? '/';
      const queryAt = target.indexOf('?');
      const path = queryAt === -1 ? target : target.slice(0, queryAt);
      if (untracedPaths.has(path)) return listener.call(this, req, res);
      const method = req.method ?? 'GET';
      const known = KNOWN_METHODS.has(method);
      const route = routes.has(path) ? path : undefined;
      const attributes: Attributes = {
        'http.request.method': known ? method : '_OTHER',
        'url.scheme': 'http',
        'url.path': path,
        'network.peer.address': req.socket.remoteAddress,
        'user_agent.original': req.headers['user-agent'],
      };
      if (!known) attributes['http.request.method_original'] = method;
      if (route) attributes['http.route'] = route;
      const parent = carriesContext(req.headers) ? propagation.extract(ROOT_CONTEXT, req.headers) : ROOT_CONTEXT;
      const span = startSpan(route ? `${attributes['http.request.method']} ${route}` : String(attributes['http.request.method']), SpanKind.SERVER, attributes, parent);
      // A response emits 'close' once, when it is sent or its client is gone.
      res.on('close', () => endServerSpan(span, res, requestIdHeader, requestIdAttribute));
      return context.with(trace.setSpan(parent, span).setValue(OPERATION_CARRIER, { span, server: span, taken: false, requestId: undefined } satisfies OperationCarrier), listener, this, req, res);
    };
}

function endServerSpan(span: Span, res: ServerResponse, requestIdHeader: string, requestIdAttribute: string): void {
  // Closed before an answer was sent (the client left): no status to record, and not the gateway's failure.
  if (res.headersSent) {
    const status = res.statusCode;
    span.setAttribute('http.response.status_code', status);
    if (status >= 500) span.setAttribute('error.type', String(status)).setStatus({ code: SpanStatusCode.ERROR });
  }
  const id = res.getHeader(requestIdHeader);
  if (typeof id === 'string') span.setAttribute(requestIdAttribute, id);
  span.end();
}
