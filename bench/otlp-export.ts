// `npm run bench:otlp-export`: the gateway's span processor and exporter (src/telemetry/otlp-export.ts: OTLP JSON
// written as each span ends) against the SDK's BatchSpanProcessor with @opentelemetry/exporter-trace-otlp-http, the
// peer it replaced, side by side in one process and one run.
//
// Each target is a tracer provider of its own over the same resource and the same sampler, exporting to one OTLP/HTTP
// receiver in a child process (so that what receiving costs is not counted). A request is what a traced one-row read
// makes: a server span started with the HTTP attributes, named and given the legacy call's and the operation's
// attributes, and a SQL client span under it with its statement; each ends carrying a request id. A third target
// makes the same spans with no processor at all: subtracted, it leaves what batching and exporting cost.
// BENCH_ROUNDS (12) rounds load each target with BENCH_SLICE (5,000) requests in turn, a new order each round,
// yielding to the event loop every 100 requests so that batches are sent as they fill. Prints CPU time per request
// (this process, user + system: the spans, the serialization, garbage collection and the HTTP exports) per target,
// and ours / the SDK's, whole and for the export alone.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, TracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { OtlpJsonExportProcessor } from '../src/telemetry/otlp-export.js';
import { ROUND_SEED, roundOrders, runBench } from './lib.js';

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 12));
const SLICE = Math.max(100, Number(process.env.BENCH_SLICE ?? 5000));
const STATEMENT = 'SELECT "name", "description", "status"::text AS "status", "paused", "rate", "labels", "createTime", "updateTime" FROM "Queue" WHERE "name" = ANY($1::text[])';

type Target = 'SDK BatchSpanProcessor + OTLP exporter' | 'gateway OTLP JSON processor' | 'no processor';

/** A draining OTLP/HTTP receiver in a child process; resolves to its URL. */
async function startReceiver(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['-e', "const s=require('http').createServer((q,r)=>{q.resume();q.on('end',()=>r.writeHead(200,{'content-type':'application/json'}).end('{}'))});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))"], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  return { url: `http://127.0.0.1:${port}/v1/traces`, stop: () => child.kill() };
}

function providerFor(target: Target, url: string): TracerProvider {
  const processors: Record<Target, () => SpanProcessor[]> = {
    'SDK BatchSpanProcessor + OTLP exporter': () => [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
    'gateway OTLP JSON processor': () => [new OtlpJsonExportProcessor({ exporter: { url } })],
    'no processor': () => [],
  };
  return new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'public-services-gateway', 'service.version': '0.1.0', 'host.name': 'bench', 'process.pid': process.pid }),
    sampler: new AlwaysOnSampler(),
    spanProcessors: processors[target](),
  });
}

/** The spans of one traced one-row read, as src/telemetry/server-spans.ts and tracing.ts make them. */
function request(provider: TracerProvider): void {
  const tracer = provider.getTracer('public-services-gateway', '0.1.0');
  const requestId = randomUUID();
  const server = tracer.startSpan('POST', {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': 'POST', 'url.scheme': 'http', 'url.path': '/getQueue', 'network.peer.address': '127.0.0.1', 'user_agent.original': 'autocannon' },
  });
  server
    .setAttributes({ 'http.route': '/getQueue', 'rpc.system': 'jsonrpc', 'rpc.method': 'getQueue', 'rpc.jsonrpc.version': '2.0', 'rpc.jsonrpc.request_id': '1', 'gateway.request_id': requestId })
    .updateName('POST /getQueue');
  server.setAttributes({ 'graphql.execute.operationName': 'GetQueue', 'graphql.execute.operationType': 'query' });
  const sql = tracer.startSpan('SELECT', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT', 'db.query.text': STATEMENT, 'gateway.request_id': requestId } }, trace.setSpan(context.active(), server));
  sql.end();
  server.setAttribute('http.response.status_code', 200);
  server.end();
}

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function load(provider: TracerProvider, requests: number): Promise<number> {
  const start = cpuMicros();
  for (let i = 0; i < requests; i++) {
    request(provider);
    if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
  }
  await provider.forceFlush();
  return cpuMicros() - start;
}

async function main(): Promise<void> {
  const receiver = await startReceiver();
  const targets: Target[] = ['SDK BatchSpanProcessor + OTLP exporter', 'gateway OTLP JSON processor', 'no processor'];
  const providers = new Map(targets.map((t) => [t, providerFor(t, receiver.url)]));
  const cpu = new Map<Target, number>(targets.map((t) => [t, 0]));
  try {
    for (const t of targets) await load(providers.get(t)!, SLICE); // warm-up
    for (const order of roundOrders(targets, ROUNDS)) {
      for (const t of order) cpu.set(t, cpu.get(t)! + (await load(providers.get(t)!, SLICE)));
    }
  } finally {
    await Promise.all([...providers.values()].map((p) => p.shutdown()));
    receiver.stop();
  }
  const perRequest = (t: Target) => cpu.get(t)! / (ROUNDS * SLICE);
  const bare = perRequest('no processor');
  console.log(`\n${ROUNDS} rounds of ${SLICE} requests (a server span and a SQL span each) per target, a new order each round (BENCH_SEED ${ROUND_SEED})\n`);
  console.log('| target | CPU µs per request | export alone µs |');
  console.log('|---|---:|---:|');
  for (const t of targets) console.log(`| ${t} | ${perRequest(t).toFixed(2)} | ${t === 'no processor' ? '-' : (perRequest(t) - bare).toFixed(2)} |`);
  const peer = 'SDK BatchSpanProcessor + OTLP exporter';
  const ours = 'gateway OTLP JSON processor';
  console.log(`\nours / SDK, CPU per request: ${(perRequest(ours) / perRequest(peer)).toFixed(2)}x; the export alone: ${((perRequest(ours) - bare) / (perRequest(peer) - bare)).toFixed(2)}x (lower is better)`);
}

runBench(main);
