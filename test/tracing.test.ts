import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from './helpers/databases.js';
import { gql, rpc } from './helpers/gateway.js';
import { startGatewayProcess } from './helpers/process.js';
import { eventually } from './helpers/sink.js';
import { SPAN_KIND, startOtlpReceiver, type ExportedSpan } from './helpers/otlp-receiver.js';
import { overSse, overWs } from './helpers/transports.js';
import { startSink, type Sink } from './channels/sink.js';
import { tracingEnabled } from '../src/telemetry/enabled.js';

// Tracing switched by the environment, in gateway processes as an operator runs them. On (OTEL_EXPORTER_OTLP_ENDPOINT
// names a loopback OTLP/HTTP receiver): a request is one trace, its HTTP server span (named after its route, carrying
// its legacy call and GraphQL operation) -> the SQL spans, each carrying the X-Request-Id; a batch's calls have spans
// of their own; a caller's traceparent is continued; a task's call is a client span; subscriptions over SSE and
// graphql-ws get operation spans of their own; the spans are exported when the gateway stops (the batch delay is longer than
// the test). Off (no endpoint): the process loads no part of OpenTelemetry (but the API prom-client always requires)
// and registers nothing with it.

const GATEWAY_ENV = { SCHEDULER: 'off', DELIVERY_WORKER: 'off' };

const REQUEST_ID = 'trace-test-create-queue';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const dirs: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

/** A gateway with tracing on: requests of every kind, then SIGTERM; returns what the receiver got and the task's target. */
async function runTraced(): Promise<{ spans: ExportedSpan[]; sink: Sink; logLines: Record<string, unknown>[] }> {
  const [receiver, sink, db] = await Promise.all([startOtlpReceiver(), startSink(), freshDatabase('pglite')]);
  cleanups.push(() => receiver.close(), () => sink.close(), () => db.drop());
  // A batch delay longer than the test: every span below reaches the receiver through the flush at shutdown.
  const gateway = startGatewayProcess({ ...db.env, ...GATEWAY_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '60000' });
  try {
    const url = await gateway.url;
    const created = await rpc(url, 'createQueue', { name: 'traced', rate: 10 }, {}, { 'x-request-id': REQUEST_ID });
    expect(created.body.result?.name, JSON.stringify(created.body)).toBe('traced');
    // The common /graphql POST, run by the gateway's own runner (compiled after its first runs), traced by a hook.
    for (let i = 0; i < 3; i++) expect((await gql(url, 'query ListQueues { queues(first: 5) { totalCount } }', {}, { 'x-request-id': `trace-test-graphql-${i}` })).data).toEqual({ queues: { totalCount: 1 } });
    // A batch on /rpc: each call its own route span, with its JSON-RPC id.
    const batch = await fetch(`${url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'trace-test-batch' },
      body: JSON.stringify([
        { jsonrpc: '2.0', method: 'getQueue', params: { name: 'traced' }, id: 41 },
        { jsonrpc: '2.0', method: 'getQueue', params: { name: 'missing' }, id: 'b' },
      ]),
    });
    expect(batch.status).toBe(200);
    // An HTTP route, refused before its operation runs.
    const upload = await fetch(`${url}/v1/systems/tracing/files`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'trace-test-http' }, body: '{}' });
    expect(upload.status).toBe(400);
    // A GET with its variables in the query string, in a trace the caller began.
    const params = new URLSearchParams({ query: 'query Parented($name: String!) { queue(name: $name) { name } }', variables: JSON.stringify({ name: 'secret-value' }) });
    const parented = await fetch(`${url}/graphql?${params}`, { headers: { accept: 'application/json', 'x-request-id': 'trace-test-parent', traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } });
    expect(parented.status).toBe(200);
    await rpc(url, 'createTask', { queueName: 'traced', name: 'call', target: { url: `${sink.url}/hook`, headers: { 'X-Kept': 'yes' } } }, {}, { 'x-request-id': 'trace-test-task' });
    await eventually(async () => (await rpc(url, 'getTask', { queueName: 'traced', name: 'call' })).body.result?.status === 'SUCCEEDED');
    const query = 'subscription { taskStatusChanged(queueName: "traced", name: "call") { status } }';
    const sse = await overSse(url, query, {}, { 'x-request-id': 'trace-test-sse' });
    expect(sse.results[0]).toMatchObject({ data: { taskStatusChanged: { status: 'SUCCEEDED' } } });
    const ws = await overWs(url, query);
    expect(ws.results[0]).toMatchObject({ data: { taskStatusChanged: { status: 'SUCCEEDED' } } });
    expect(receiver.spans).toHaveLength(0);
  } finally {
    await gateway.stop();
  }
  expect(gateway.proc.exitCode).toBe(0);
  return { spans: receiver.spans, sink, logLines: gateway.logLines };
}

/**
 * A traced gateway on PostgreSQL, where the hot statements (a queue by name, a queue's creation) run on the pool past
 * Prisma's client: their SQL spans are the gateway's own.
 */
async function runTracedOnPostgres(): Promise<ExportedSpan[]> {
  const [receiver, db] = await Promise.all([startOtlpReceiver(), freshDatabase('postgres')]);
  cleanups.push(() => receiver.close(), () => db.drop());
  const gateway = startGatewayProcess({ ...db.env, ...GATEWAY_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '60000' });
  try {
    const url = await gateway.url;
    expect((await rpc(url, 'createQueue', { name: 'on-postgres', rate: 1 }, {}, { 'x-request-id': 'trace-pg-create' })).body.result?.name).toBe('on-postgres');
    expect((await rpc(url, 'getQueue', { name: 'on-postgres' }, {}, { 'x-request-id': 'trace-pg-read' })).body.result?.name).toBe('on-postgres');
  } finally {
    await gateway.stop();
  }
  return receiver.spans;
}

/**
 * A gateway with tracing off that served requests. At exit each process writes every module it resolved (import and
 * require alike) and what is registered with the OpenTelemetry API (its global: tracer provider, context manager,
 * propagator, diag); the report returned is the one of the process that loaded the gateway.
 */
async function runUntraced(): Promise<{ modules: string[]; registered: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-trace-off-'));
  dirs.push(dir);
  const hook = join(dir, 'record-modules.mjs');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const modules = new Set();
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); modules.add(r.url); return r; } });
process.on('exit', () => writeFileSync(${JSON.stringify(dir)} + '/modules-' + process.pid + '.json', JSON.stringify({
  modules: [...modules],
  registered: Object.keys(globalThis[Symbol.for('opentelemetry.js.api.1')] ?? {}),
})));
`,
  );
  const db = await freshDatabase('pglite');
  cleanups.push(() => db.drop());
  const gateway = startGatewayProcess({ ...db.env, ...GATEWAY_ENV, OTEL_SERVICE_NAME: 'not-traced', NODE_OPTIONS: `--import ${hook}` });
  try {
    const url = await gateway.url;
    expect((await rpc(url, 'createQueue', { name: 'plain', rate: 1 })).body.result?.name).toBe('plain');
    expect((await gql(url, '{ queues { totalCount } }')).data).toEqual({ queues: { totalCount: 1 } });
  } finally {
    await gateway.stop();
  }
  // stop() returns once the gateway's own process exited (test/helpers/process.ts), its report written.
  const reports = readdirSync(dir)
    .filter((f) => f.startsWith('modules-'))
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as { modules: string[]; registered: string[] });
  const report = reports.find((r) => r.modules.some((u) => u.endsWith('/src/app.ts')));
  expect(report).toBeDefined();
  return report!;
}

// Both gateways at once: each mostly waits (start-up, the task, shutdown).
let traced: Awaited<ReturnType<typeof runTraced>>;
let untraced: Awaited<ReturnType<typeof runUntraced>>;
let onPostgres: ExportedSpan[];
// Three gateways started side by side, each run through its requests: on a loaded 2-core host this can take a minute.
beforeAll(async () => {
  [traced, untraced, onPostgres] = await Promise.all([runTraced(), runUntraced(), runTracedOnPostgres()]);
}, 90_000);
afterAll(async () => {
  await Promise.all(cleanups.map((c) => c()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  let spans: ExportedSpan[];
  let sink: Sink;
  beforeAll(() => ({ spans, sink } = traced));

  const byId = (id: string) => spans.find((s) => s.spanId === id);
  const ancestors = (span: ExportedSpan): ExportedSpan[] => {
    const parent = span.parentSpanId ? byId(span.parentSpanId) : undefined;
    return parent ? [parent, ...ancestors(parent)] : [];
  };

  it('names the service and its version', () => {
    const version = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../package.json'), 'utf8')) as { version: string }).version;
    expect(spans[0]!.resource).toMatchObject({ 'service.name': 'public-services-gateway', 'service.version': version });
  });

  it('makes a legacy call one trace: the HTTP server span, named after its route, carries the call and its operation; the SQL under it; each span with the request id', () => {
    const server = spans.find((s) => s.name === 'POST /createQueue')!;
    expect(server, spans.map((s) => s.name).join(', ')).toBeDefined();
    expect(server).toMatchObject({ kind: SPAN_KIND.SERVER, parentSpanId: '', status: 0 });
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.scheme': 'http',
      'url.path': '/createQueue',
      'http.route': '/createQueue',
      'http.response.status_code': 200,
      'network.peer.address': '127.0.0.1',
      'rpc.system': 'jsonrpc',
      'rpc.method': 'createQueue',
      'rpc.jsonrpc.request_id': 'createQueue-1',
      'graphql.execute.operationName': 'CreateQueue',
      'graphql.execute.operationType': 'mutation',
      'gateway.request_id': REQUEST_ID,
    });
    // One call, one operation: the request is one span, with nothing of the gateway's own between it and the SQL.
    const inTrace = spans.filter((s) => s.traceId === server.traceId);
    expect(inTrace.filter((s) => s.scope !== 'prisma')).toEqual([server]);

    const sql = inTrace.filter((s) => s.name === 'prisma:client:db_query');
    expect(sql.some((s) => /INSERT INTO "(public"\.")?Queue"/.test(String(s.attributes['db.query.text'])))).toBe(true);
    for (const s of sql) {
      expect(s.kind).toBe(SPAN_KIND.CLIENT);
      expect(ancestors(s)).toContain(server);
    }
    // Every span of the request, the SQL and Prisma's own included, carries the id.
    for (const s of inTrace) expect(s.attributes['gateway.request_id'], s.name).toBe(REQUEST_ID);
    expect(inTrace.length).toBeGreaterThanOrEqual(3);
  });

  it('answers a traced legacy call on the node:http door, as untraced (tracing swaps no door)', () => {
    const access = traced.logLines.find((l) => l.requestId === REQUEST_ID && l.msg === 'request');
    expect(access, JSON.stringify(traced.logLines.filter((l) => l.msg === 'request').slice(0, 3))).toMatchObject({ via: 'node:http', status: 200 });
  });

  it('traces /graphql operations on the same runner and executor as untraced: the server span carries the operation, the SQL under it, compiled runs too', () => {
    for (let i = 0; i < 3; i++) {
      const server = spans.find((s) => s.kind === SPAN_KIND.SERVER && s.attributes['gateway.request_id'] === `trace-test-graphql-${i}`)!;
      expect(server, spans.map((s) => s.name).join(', ')).toMatchObject({
        name: 'POST /graphql',
        attributes: { 'http.route': '/graphql', 'graphql.execute.operationName': 'ListQueues', 'graphql.execute.operationType': 'query' },
      });
      const inTrace = spans.filter((s) => s.traceId === server.traceId);
      expect(inTrace.filter((s) => s.scope !== 'prisma')).toEqual([server]);
      expect(inTrace.filter((s) => s.name === 'prisma:client:db_query' && ancestors(s).includes(server)).length).toBeGreaterThan(0);
    }
  });

  it('gives each call of a /rpc batch its own route span under the one request', () => {
    const calls = spans.filter((s) => s.name === 'POST /rpc' && s.kind === SPAN_KIND.INTERNAL);
    expect(calls.map((s) => s.attributes['rpc.jsonrpc.request_id']).sort()).toEqual(['41', 'b']);
    expect(new Set(calls.map((s) => s.parentSpanId)).size).toBe(1);
    const server = byId(calls[0]!.parentSpanId)!;
    expect(server).toMatchObject({ kind: SPAN_KIND.SERVER, name: 'POST /rpc', attributes: { 'http.route': '/rpc', 'gateway.request_id': 'trace-test-batch' } });
    expect(server.attributes['rpc.method']).toBeUndefined();
    // Each call's span carries its operation.
    for (const call of calls) expect(call.attributes).toMatchObject({ 'graphql.execute.operationName': 'GetQueue', 'graphql.execute.operationType': 'query' });
    expect(spans.filter((s) => calls.some((c) => c.spanId === s.parentSpanId) && s.scope !== 'prisma')).toEqual([]);
    // A caller's mistake (no such queue) is recorded, and is not the gateway's failure.
    const missing = calls.find((s) => s.attributes['rpc.jsonrpc.request_id'] === 'b')!;
    expect(missing).toMatchObject({ status: 0, events: ['exception'] });
    expect(missing.attributes).toMatchObject({ 'rpc.method': 'getQueue', 'rpc.jsonrpc.error_code': -32004, 'gateway.request_id': 'trace-test-batch' });
  });

  it('names an HTTP route by its template, with the status it answered', () => {
    const route = spans.find((s) => s.name === 'POST /v1/systems/{systemId}/files')!;
    expect(route).toMatchObject({ kind: SPAN_KIND.SERVER, parentSpanId: '' });
    expect(route.attributes).toMatchObject({ 'http.route': '/v1/systems/{systemId}/files', 'url.path': '/v1/systems/tracing/files', 'http.response.status_code': 400, 'gateway.request_id': 'trace-test-http' });
    expect(spans.filter((s) => s.parentSpanId === route.spanId)).toEqual([]);
  });

  it("continues the caller's trace (traceparent) and records no query string", () => {
    const server = spans.find((s) => s.kind === SPAN_KIND.SERVER && s.attributes['gateway.request_id'] === 'trace-test-parent')!;
    expect(server).toMatchObject({ name: 'GET /graphql', traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN, attributes: { 'url.path': '/graphql', 'http.route': '/graphql', 'http.response.status_code': 200 } });
    expect(Object.keys(server.attributes).filter((k) => k.startsWith('url.'))).toEqual(['url.scheme', 'url.path']);
    expect(JSON.stringify(server.attributes)).not.toContain('secret-value');
    expect(server.attributes['graphql.execute.operationName']).toBe('Parented');
  });

  it("traces a task's call as a client span and passes its context on, the request's own headers untouched", () => {
    const client = spans.find((s) => s.kind === SPAN_KIND.CLIENT && s.attributes['server.port'] === Number(new URL(sink.url).port))!;
    expect(client).toMatchObject({ name: 'POST', attributes: { 'http.request.method': 'POST', 'url.full': `${sink.url}/hook`, 'http.response.status_code': 200 } });
    const hit = sink.requests.find((r) => r.url === '/hook')!;
    expect(hit.headers.traceparent).toBe(`00-${client.traceId}-${client.spanId}-01`);
    const names = hit.rawHeaders.filter((_, i) => i % 2 === 0);
    expect(names).toContain('x-kept');
    expect(names).not.toContain('0');
  });

  it('gives SSE and graphql-ws subscriptions their operation spans', () => {
    const subscriptions = spans.filter((s) => s.name === 'subscription.anonymous');
    expect(subscriptions).toHaveLength(2);
    const sse = subscriptions.find((s) => s.attributes['gateway.request_id'] === 'trace-test-sse')!;
    expect(byId(sse.parentSpanId)).toMatchObject({ kind: SPAN_KIND.SERVER, name: 'POST /graphql' });
    const ws = subscriptions.find((s) => s !== sse)!;
    expect(ws.attributes['gateway.request_id']).toMatch(/^[0-9a-f-]{36}:1$/);
  });

  it('does not trace the background SQL of the workers (no Prisma span without a parent)', () => {
    expect(spans.filter((s) => s.name.startsWith('prisma:') && !s.parentSpanId)).toEqual([]);
  });
});

describe('tracing on, on PostgreSQL', () => {
  const traceOf = (requestId: string) => {
    const server = onPostgres.find((s) => s.kind === SPAN_KIND.SERVER && s.attributes['gateway.request_id'] === requestId)!;
    expect(server, onPostgres.map((s) => s.name).join(', ')).toBeDefined();
    return { server, spans: onPostgres.filter((s) => s.traceId === server.traceId) };
  };

  it("gives the gateway's own statements SQL spans under the request's span, with the text and not the values", () => {
    for (const [requestId, statement] of [
      ['trace-pg-read', /^SELECT .* FROM "Queue" WHERE "name" = ANY\(\$1::text\[\]\)$/s],
      ['trace-pg-create', /^\s*WITH created AS \(\s*INSERT INTO "Queue"/],
    ] as const) {
      const { server, spans } = traceOf(requestId);
      const sql = spans.filter((s) => s.attributes['db.system.name'] === 'postgresql');
      expect(sql.length, requestId).toBeGreaterThan(0);
      for (const s of sql) {
        expect(s).toMatchObject({ kind: SPAN_KIND.CLIENT, parentSpanId: server.spanId, attributes: { 'gateway.request_id': requestId } });
        expect(s.name).toBe(s.attributes['db.operation.name']);
        expect(String(s.attributes['db.query.text'])).not.toContain('on-postgres');
      }
      expect(sql.some((s) => statement.test(String(s.attributes['db.query.text']))), JSON.stringify(sql.map((s) => s.attributes['db.query.text']))).toBe(true);
    }
  });

  it('does not trace the background SQL (no SQL span without a parent)', () => {
    expect(onPostgres.filter((s) => (s.name.startsWith('prisma:') || s.attributes['db.system.name']) && !s.parentSpanId)).toEqual([]);
  });
});

describe('tracing off', () => {
  it('is switched by an OTLP endpoint, unless OTEL_SDK_DISABLED', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });

  it('loads no part of OpenTelemetry and registers nothing with its API in a gateway that served requests', () => {
    // prom-client requires @opentelemetry/api for its exemplars, tracing or not; nothing else of OpenTelemetry loads.
    const otel = untraced.modules.filter((u) => /opentelemetry|@prisma\/instrumentation|\/src\/telemetry\/tracing/.test(u));
    expect(otel.filter((u) => !u.includes('/node_modules/@opentelemetry/api/'))).toEqual([]);
    expect(untraced.registered).toEqual([]);
  });
});
