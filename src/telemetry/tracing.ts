import type { RequestListener } from 'node:http';
import { context, createContextKey, type Context, diag, DiagLogLevel, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ParentBasedSampler, SamplingDecision, type Sampler, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { PrismaInstrumentation } from '@prisma/instrumentation';
import { OtlpJsonExportProcessor } from './otlp-export.js';
import { recordingSpansHold, spanStarter, type SpanStarter } from './recording-span.js';
import { OPERATION_CARRIER, serverSpans, type OperationCarrier } from './server-spans.js';
import type { Logger } from '../log.js';
import { REQUEST_ID_HEADER } from '../pipeline/request-context.js';
import type { LegacyAnswer, LegacyCallTracer } from '../api/legacy/legacy-door.js';
import type { OperationOutcome, OperationTracer } from '../pipeline/pipeline.js';
import type { GraphQLError } from 'graphql';
import { AppError, ServiceUnavailableError } from '../errors.js';
import { RPC_ERROR, type RpcResponse } from '../api/legacy/jsonrpc.js';
import { wrapExchange, type Exchange, type ExchangeOptions, type OutboundRequest } from '../http/outbound.js';
import { wrapStatements, type StatementWrapper } from '../db/statements.js';
import { projectVersion } from '../kit/project-root.js';

// OpenTelemetry tracing, on only when an OTLP endpoint is set (src/telemetry/enabled.ts): `serve` (src/cli/commands.ts)
// imports this module then, and only then, before it imports the gateway. Off, no part of OpenTelemetry is loaded and
// the gateway builds neither plugin nor wrapper. On, one trace per request:
//   HTTP server span `POST /getQueue` (src/telemetry/server-spans.ts; the legacy call and the GraphQL operation the
//   request runs, hooks on the legacy door and the pipeline, name it and put their attributes and outcome on it)
//     └ call span `POST /rpc` (each JSON-RPC call of a /rpc batch only, carrying its operation)
//         └ SQL: `SELECT` (the gateway's own statements on PostgreSQL, src/db/statements.ts), or
//           prisma:client:operation └ prisma:client:db_query (@prisma/instrumentation)
//   Subscriptions (SSE, graphql-ws) and graphql-ws operations: an operation span of their own, `subscription.Name`.
// Every span started under a request carries its X-Request-Id as `gateway.request_id`. Outbound calls (tasks,
// scheduler targets, channels: src/http/outbound.ts on node:http) are HTTP client spans. Export: OTLP over HTTP (JSON)
// to OTEL_EXPORTER_OTLP_ENDPOINT, batched; the standard OTEL_* variables (headers, timeout, service name, resource
// attributes, sampler, OTEL_BSP_*) are read by the SDK or here. Spans are written into their export request as they end
// (src/telemetry/otlp-export.ts). The spans every request makes (server, SQL) are started past the SDK's Tracer, as
// spans that behave as its own (src/telemetry/recording-span.ts), unless the environment sets limits or a sampler.

export const REQUEST_ID_ATTRIBUTE = 'gateway.request_id';
export const DEFAULT_SERVICE_NAME = 'public-services-gateway';

export interface Tracing {
  /** The HTTP server span of every request the listener is handed (src/edge/http-server.ts wraps its listener). */
  readonly traceRequests: (listener: RequestListener) => RequestListener;
  /** The span of one legacy call (src/api/legacy/legacy-door.ts). */
  readonly traceLegacyCall: LegacyCallTracer;
  /** The span of every operation the pipeline runs (src/pipeline/pipeline.ts), whatever its door. */
  readonly traceOperation: OperationTracer;
  /** Exports the spans still buffered and stops; the last step of the gateway's shutdown. */
  shutdown(): Promise<void>;
}

/**
 * The request id rides in the OpenTelemetry context, so that spans started by others (Prisma, http) get it too: on
 * the request's operation carrier (src/telemetry/server-spans.ts), or under a key of its own where there is none (a
 * graphql-ws operation has no HTTP request).
 */
const REQUEST_ID = createContextKey('gateway request id');
function requestIdIn(of: Context): string | undefined {
  const id = carrierOf(of)?.requestId ?? of.getValue(REQUEST_ID);
  return typeof id === 'string' ? id : undefined;
}

const requestIdOnSpans: SpanProcessor = {
  onStart(span, parentContext) {
    const id = requestIdIn(parentContext);
    if (id !== undefined) span.setAttribute(REQUEST_ID_ATTRIBUTE, id);
  },
  onEnd() {},
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

/**
 * Background work (worker polls, claims, settles, cron rounds) runs outside any request: its SQL alone would make a
 * trace per loop and second. A root SQL span (Prisma's, or one of the gateway's own statements) is not sampled; an
 * outbound call of a task (a root client span) is.
 */
const requestsAndCalls: Sampler = {
  shouldSample: (parentContext, _traceId, spanName, _kind, attributes) => ({
    decision:
      (spanName.startsWith('prisma:') || attributes[DB_SYSTEM] !== undefined) && !trace.getSpanContext(parentContext) ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED,
  }),
  toString: () => 'RequestsAndCallsSampler',
};

/** Health probes and scrapes, asked every few seconds, are not traced. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function packageVersion(): string | undefined {
  try {
    return projectVersion();
  } catch {
    return undefined;
  }
}

const envNumber = (name: string): number | undefined => {
  const value = Number(process.env[name]);
  return process.env[name]?.trim() && Number.isFinite(value) && value >= 0 ? value : undefined;
};

/** Starts the SDK and registers its global tracer provider; call before the gateway's modules make requests. */
export function startTracing(log: Logger): Tracing {
  const env = process.env;
  const version = packageVersion();
  // The resource's service.name and service.version default to ours; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
  // (the version goes through the variable the SDK reads: a Resource of our own would need another package).
  const resourceAttributes = (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').map((pair) => pair.split('=')[0]!.trim());
  if (version && !resourceAttributes.includes('service.version')) {
    env.OTEL_RESOURCE_ATTRIBUTES = [env.OTEL_RESOURCE_ATTRIBUTES, `service.version=${version}`].filter(Boolean).join(',');
  }
  const namedByEnv = Boolean(env.OTEL_SERVICE_NAME) || resourceAttributes.includes('service.name');
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol && protocol !== 'http/json') log.warn({ protocol }, 'tracing exports OTLP over HTTP as JSON (http/json); the protocol asked for is not used');

  const processors: SpanProcessor[] = [
    requestIdOnSpans,
    new OtlpJsonExportProcessor({
      maxQueueSize: envNumber('OTEL_BSP_MAX_QUEUE_SIZE'),
      maxExportBatchSize: envNumber('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
      scheduledDelayMillis: envNumber('OTEL_BSP_SCHEDULE_DELAY'),
      exportTimeoutMillis: envNumber('OTEL_BSP_EXPORT_TIMEOUT'),
    }),
  ];
  const sampler = env.OTEL_TRACES_SAMPLER ? undefined : new ParentBasedSampler({ root: requestsAndCalls });
  const sdk = new NodeSDK({
    ...(namedByEnv ? {} : { serviceName: DEFAULT_SERVICE_NAME }),
    // Traces only: metrics stay on /metrics (prom-client), logs on stdout.
    metricReaders: [],
    logRecordProcessors: [],
    spanProcessors: processors,
    ...(sampler && { sampler }),
    // HTTP server spans are the gateway's own (src/telemetry/server-spans.ts), outbound calls' too (tracedExchange).
    instrumentations: [
      new PrismaInstrumentation(),
    ],
  });
  sdk.start();
  // SDK diagnostics (an unreachable collector, dropped spans) go to the gateway's log, warnings and worse unless told.
  const level = DiagLogLevel[(env.OTEL_LOG_LEVEL ?? 'WARN').toUpperCase() as keyof typeof DiagLogLevel] ?? DiagLogLevel.WARN;
  const otelLog = log.child({ component: 'opentelemetry' });
  diag.setLogger(
    {
      error: (message, ...args) => otelLog.error({ args }, message),
      warn: (message, ...args) => otelLog.warn({ args }, message),
      info: (message, ...args) => otelLog.info({ args }, message),
      debug: (message, ...args) => otelLog.debug({ args }, message),
      verbose: (message, ...args) => otelLog.trace({ args }, message),
    },
    { logLevel: level, suppressOverrideMessage: true },
  );
  const tracer = trace.getTracer('public-services-gateway', version);
  // The spans of every request (server, SQL) as RecordingSpans where they would be the SDK's spans to the letter.
  const startSpan = spanStarter(tracer, sampler && recordingSpansHold(env) ? { sampler, processors } : undefined);
  wrapExchange((send) => tracedExchange(tracer, send));
  wrapStatements(statementTracer(startSpan));
  return {
    traceRequests: serverSpans({ startSpan, untracedPaths: UNTRACED_PATHS, routes: new Set(['/graphql']), requestIdHeader: REQUEST_ID_HEADER, requestIdAttribute: REQUEST_ID_ATTRIBUTE }),
    traceLegacyCall: legacyCallTracer(tracer),
    // Named and scoped as @envelop/opentelemetry names operation spans, so traces read as they did.
    traceOperation: operationTracer(trace.getTracer('graphql')),
    shutdown: () => sdk.shutdown(),
  };
}

const carrierOf = (of: Context) => of.getValue(OPERATION_CARRIER) as OperationCarrier | undefined;

/** `running`'s outcome on `span` (`describe`), or its failure: an exception event and an error status. */
function recordedOn<T>(span: Span, running: Promise<T>, describe: (span: Span, outcome: T) => void): Promise<T> {
  return running.then(
    (outcome) => (describe(span, outcome), outcome),
    (error: unknown) => {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    },
  );
}

/**
 * `run` inside an active internal span: `describe` reads its outcome onto the span; a throw marks it failed.
 * `carriesOperation`: the operation `run` runs is recorded on this span (operationTracer).
 */
function inSpan<T>(tracer: Tracer, name: string, attributes: Attributes, parent: Context, run: () => Promise<T>, describe: (span: Span, outcome: T) => void, carriesOperation = false): Promise<T> {
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
  const active = trace.setSpan(parent, span);
  return context.with(carriesOperation ? active.setValue(OPERATION_CARRIER, { span, server: carrierOf(parent)?.server, taken: false, requestId: requestIdIn(parent) } satisfies OperationCarrier) : active, () =>
    // A run that throws before it returns its promise is recorded too.
    recordedOn(span, new Promise<T>((resolve) => resolve(run())), describe).finally(() => span.end()),
  );
}

/**
 * The operation (`mutation.CreateQueue`). The one operation of an HTTP request (a /graphql request, a legacy call) is
 * recorded on that request's span, the server span or a /rpc batch call's span (OPERATION_CARRIER): its name, type
 * and errors, with the SQL under it. A span of its own, active while it runs so that the SQL spans are its children,
 * where nothing else stands for it: subscriptions, graphql-ws, a second operation of one request.
 */
function operationTracer(tracer: Tracer): OperationTracer {
  return (operation, run) => {
    const active = context.active();
    let parent = active;
    const carrier = carrierOf(active);
    // A legacy call has put the id on the carrier, and on the server span, already.
    if (operation.requestId && requestIdIn(active) !== operation.requestId) {
      if (carrier) {
        carrier.requestId = operation.requestId;
        // The HTTP server span the operation runs under carries its request id too.
        carrier.server?.setAttribute(REQUEST_ID_ATTRIBUTE, operation.requestId);
      } else {
        // graphql-ws: no HTTP request, no carrier.
        parent = active.setValue(REQUEST_ID, operation.requestId);
      }
    }
    const attributes: Attributes = { 'graphql.execute.operationName': operation.name, 'graphql.execute.operationType': operation.type };
    const carried = operation.type === 'subscription' ? undefined : carrier;
    if (!carried || carried.taken) return inSpan(tracer, `${operation.type}.${operation.name}`, attributes, parent, run, describeResult);
    carried.taken = true;
    return recordedOn(carried.span.setAttributes(attributes), parent === active ? run() : context.with(parent, run), describeResult);
  };
}

/**
 * An operation's errors as an exception event; the span is marked failed only by the gateway's own failures (an
 * outage, a bug: what masking answers as SERVICE_UNAVAILABLE or "Unexpected error."), not by the caller's mistakes.
 */
function describeResult(span: Span, result: OperationOutcome): void {
  if (Symbol.asyncIterator in result || !result.errors?.length) return;
  span.recordException({ name: 'graphql.execute.error', message: JSON.stringify(result.errors) });
  if (result.errors.some(isGatewayFailure)) span.setStatus({ code: SpanStatusCode.ERROR });
}

function isGatewayFailure(error: GraphQLError): boolean {
  const original = error.originalError;
  if (original instanceof ServiceUnavailableError || error.extensions?.code === 'SERVICE_UNAVAILABLE') return true;
  // By name: graphql may be loaded twice (ESM and CommonJS builds), so instanceof GraphQLError is unreliable.
  return original != null && !(original instanceof AppError) && original.name !== 'GraphQLError';
}

/**
 * A legacy call of its own (a documented path, an HTTP route, a single call on /rpc) is the request: the server span
 * is named after its route and carries its attributes and outcome, one span where there were two alike. Each call of
 * a /rpc batch gets a span of its own under the server span.
 */
function legacyCallTracer(tracer: Tracer): LegacyCallTracer {
  return (request, call, run) => {
    const requestId = request.id;
    const attributes: Attributes = { 'http.route': call.route };
    if (call.rpc) {
      attributes['rpc.system'] = 'jsonrpc';
      attributes['rpc.method'] = call.rpc.method;
      attributes['rpc.jsonrpc.version'] = '2.0';
      if (call.rpc.id !== null) attributes['rpc.jsonrpc.request_id'] = String(call.rpc.id);
    }
    let parent = context.active();
    const carrier = carrierOf(parent);
    if (requestId) {
      if (carrier) carrier.requestId = requestId;
      else parent = parent.setValue(REQUEST_ID, requestId);
    }
    const server = carrier?.server;
    const name = `${call.method} ${call.route}`;
    if (server && !call.inBatch) {
      if (requestId) attributes[REQUEST_ID_ATTRIBUTE] = requestId;
      server.setAttributes(attributes).updateName(name);
      return recordedOn(server, run(), describeOutcome);
    }
    server?.setAttributes(requestId ? { 'http.route': call.route, [REQUEST_ID_ATTRIBUTE]: requestId } : { 'http.route': call.route }).updateName(name);
    attributes['http.request.method'] = call.method;
    // A call of a batch: its span carries its operation.
    return inSpan(tracer, name, attributes, parent, run, describeOutcome, true);
  };
}

/** The answer on the span; an error status only for the gateway's failures, not for the caller's mistakes. */
function describeOutcome(span: Span, outcome: RpcResponse | LegacyAnswer): void {
  // A JSON-RPC answer has no numeric status; a REST path's answer has one.
  if (!('jsonrpc' in outcome)) {
    span.setAttribute('http.response.status_code', outcome.status);
    if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    return;
  }
  if (!('error' in outcome)) return;
  span.setAttributes({ 'rpc.jsonrpc.error_code': outcome.error.code, 'rpc.jsonrpc.error_message': outcome.error.message });
  if (outcome.error.code === RPC_ERROR.INTERNAL_ERROR || outcome.error.code === RPC_ERROR.SERVICE_UNAVAILABLE) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
  }
}

const DB_SYSTEM = 'db.system.name';
/**
 * A statement's span name (its operation: the first keyword, SELECT, INSERT, WITH ...) and attributes, made once per
 * text (a span copies the attributes it is started with, so one object serves every span of a text).
 */
const statementShapes = new Map<string, { name: string; attributes: Attributes }>();

function statementShape(text: string): { name: string; attributes: Attributes } {
  let shape = statementShapes.get(text);
  if (shape === undefined) {
    const name = /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'postgresql';
    shape = { name, attributes: { [DB_SYSTEM]: 'postgresql', 'db.operation.name': name, 'db.query.text': text } };
    if (statementShapes.size < 1024) statementShapes.set(text, shape);
  }
  return shape;
}

/**
 * The gateway's own statements on PostgreSQL (src/db/statements.ts, past Prisma's client and so past its spans) as
 * client spans under the span of the request or operation that runs them: the statement text with its `$n`
 * parameters, never the values. A read shared by several requests (src/db/coalesced-reads.ts) is a span of the
 * request that asked first.
 */
function statementTracer(startSpan: SpanStarter): StatementWrapper {
  return (text, run) => {
    const { name, attributes } = statementShape(text);
    // Not made the active span: nothing under a statement starts a span of its own.
    const span = startSpan(name, SpanKind.CLIENT, attributes, context.active());
    return run().then(
      (rows) => (span.end(), rows),
      (error: unknown) => {
        // The SQLSTATE when the server refused the statement (23505: a duplicate key), else the error's class.
        const code = (error as { code?: unknown }).code;
        span.recordException(error as Error);
        span.setAttribute('error.type', typeof code === 'string' ? code : (error as Error).name).setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  };
}

/**
 * An outbound call (task, scheduler target, channel) as an HTTP client span, with the trace context propagated in
 * `traceparent` (OTEL_PROPAGATORS=none: nothing is added) unless the caller set that header itself.
 */
function tracedExchange(tracer: Tracer, send: (req: OutboundRequest, options: ExchangeOptions) => Promise<Exchange>) {
  return (req: OutboundRequest, options: ExchangeOptions): Promise<Exchange> => {
    const attributes: Attributes = { 'http.request.method': req.method };
    try {
      const url = new URL(req.url);
      Object.assign(attributes, {
        'url.full': traceableUrl(url),
        'url.scheme': url.protocol.slice(0, -1),
        'server.address': url.hostname,
        'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      });
    } catch {
      /* not a URL: exchange says so */
    }
    return tracer.startActiveSpan(req.method, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        const carrier: Record<string, string> = {};
        propagation.inject(context.active(), carrier);
        const pairs: (readonly [string, string])[] = Array.isArray(req.headers) ? [...req.headers] : Object.entries(req.headers);
        for (const [name, value] of Object.entries(carrier)) if (!pairs.some(([n]) => n.toLowerCase() === name)) pairs.push([name, value]);
        const result = await send({ ...req, headers: pairs }, options);
        if (result.ok) {
          span.setAttribute('http.response.status_code', result.status);
          if (result.status >= 400) span.setAttributes({ 'error.type': String(result.status) }).setStatus({ code: SpanStatusCode.ERROR });
        } else {
          span.setAttribute('error.type', result.kind).setStatus({ code: SpanStatusCode.ERROR, message: result.message });
        }
        return result;
      } finally {
        span.end();
      }
    });
  };
}

/**
 * The URL a span may show: no credentials, no query, and path segments that may be secrets (longer than 16
 * characters, or with characters other than letters, digits and . _ ~ -) as REDACTED.
 */
function traceableUrl(url: URL): string {
  const path = url.pathname
    .split('/')
    .map((segment) => (segment.length <= 16 && /^[A-Za-z0-9._~-]*$/.test(segment) ? segment : 'REDACTED'))
    .join('/');
  return `${url.protocol}//${url.host}${path}`;
}
