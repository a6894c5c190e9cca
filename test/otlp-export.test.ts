import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { context, diag, DiagLogLevel, SpanKind, SpanStatusCode, trace, TraceFlags, type Span } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, ParentBasedSampler, SamplingDecision, TracerProvider, type Sampler, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { OtlpJsonExportProcessor } from '../src/telemetry/otlp-export.js';

// The gateway's span processor and exporter (src/telemetry/otlp-export.ts, OTLP JSON written as spans end) against
// the SDK's BatchSpanProcessor with @opentelemetry/exporter-trace-otlp-http, the peer it replaces: the same spans, ended
// under one provider with both processors, reach two loopback receivers as the same request. Then what a batching
// exporter must do: batches by size and by delay, a bounded queue when the collector is slow, a failed export that
// throws nothing, the exporter settings (headers, gzip), and nothing sent after shutdown.

interface Received {
  headers: IncomingMessage['headers'];
  body: unknown;
}

interface Receiver {
  url: string;
  requests: Received[];
  /** Until released, requests are held unanswered (a slow collector). */
  hold(): () => void;
  answerWith(status: number): void;
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
const providers: TracerProvider[] = [];

async function startReceiver(): Promise<Receiver> {
  const requests: Received[] = [];
  let held: (() => void)[] | undefined;
  let status = 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      requests.push({ headers: req.headers, body: JSON.parse(text) });
      const answer = () => res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      if (held) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    requests,
    hold() {
      held = [];
      return () => {
        const waiting = held ?? [];
        held = undefined;
        for (const answer of waiting) answer();
      };
    },
    answerWith(code) {
      status = code;
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
  receivers.push(receiver);
  return receiver;
}

/** Records every span, but marks as sampled only those not named `record-only`: what onEnd must skip. */
const recordOnlyByName: Sampler = {
  shouldSample: (_context, _traceId, name) => ({ decision: name === 'record-only' ? SamplingDecision.RECORD : SamplingDecision.RECORD_AND_SAMPLED }),
  toString: () => 'recordOnlyByName',
};

function providerWith(...spanProcessors: SpanProcessor[]): TracerProvider {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'otlp "export" test', 'service.version': '1.2.3', 'host.name': 'héte\\1', 'process.pid': 4242 }),
    sampler: new ParentBasedSampler({ root: recordOnlyByName }),
    spanProcessors,
  });
  providers.push(provider);
  return provider;
}

const spansOf = (request: Received) =>
  (request.body as { resourceSpans: { scopeSpans: { spans: { name: string }[] }[] }[] }).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => s.name)));

/** Spans of every shape the SDK records: attribute types and escapes, events, links, statuses, remote parents, scopes. */
function endSpansOfEveryShape(provider: TracerProvider): void {
  const gateway = provider.getTracer('public-services-gateway', '0.1.0');
  const graphql = provider.getTracer('graphql');
  const versioned = provider.getTracer('with-schema', '2.0.0', { schemaUrl: 'https://opentelemetry.io/schemas/1.26.0' });
  const server = gateway.startSpan('POST /getQueue', {
    kind: SpanKind.SERVER,
    attributes: {
      'http.request.method': 'POST',
      'url.path': '/getQueue',
      quoted: 'say "hi"\\ now\n\ttab\u0001',
      unicode: 'очередь 🚀 é',
      lone: 'half \ud800 surrogate',
      empty: '',
      int: 200,
      negative: -7,
      big: 2 ** 60,
      double: 1.5,
      tiny: 1e-7,
      nan: Number.NaN,
      yes: true,
      no: false,
      strings: ['a', 'b"c'],
      numbers: [1, 2.5, -3],
      bools: [true, false],
      withNull: ['x', null, 'y'],
    },
  });
  server.setAttributes({ 'http.route': '/getQueue', 'rpc.system': 'jsonrpc' }).updateName('POST /getQueue');
  const inServer = trace.setSpan(context.active(), server);
  const sql = gateway.startSpan('SELECT', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql', 'db.query.text': 'SELECT "name" FROM "Queue" WHERE "name" = $1' } }, inServer);
  sql.addEvent('started', { rows: 0 });
  sql.addEvent('bare');
  sql.recordException(new Error('boom "quoted"'));
  sql.setStatus({ code: SpanStatusCode.ERROR, message: 'the statement failed: "23505"' });
  sql.end();
  const operation = graphql.startSpan('query.GetQueue', { kind: SpanKind.INTERNAL, links: [{ context: sql.spanContext(), attributes: { why: 'follows' } }, { context: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: new TraceState('vendor=a,other=b') } }] }, inServer);
  operation.addLink({ context: server.spanContext() });
  operation.setStatus({ code: SpanStatusCode.OK });
  operation.end();
  server.setAttribute('http.response.status_code', 200);
  server.end();
  const remote = trace.setSpanContext(context.active(), { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: new TraceState('congo=t61rcWkgMzE') });
  for (const kind of [SpanKind.PRODUCER, SpanKind.CONSUMER]) versioned.startSpan(`continued ${kind}`, { kind }, remote).end();
  gateway.startSpan('record-only').end();
  const unended: Span = gateway.startSpan('never ended');
  void unended;
}

afterEach(async () => {
  diag.disable();
  await Promise.all(providers.splice(0).map((p) => p.shutdown().catch(() => undefined)));
});
afterAll(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

describe('the OTLP JSON export processor', () => {
  it('sends the request the SDK exporter sends, for spans of every shape', async () => {
    const [ours, theirs] = await Promise.all([startReceiver(), startReceiver()]);
    const provider = providerWith(new OtlpJsonExportProcessor({ exporter: { url: ours.url } }), new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: theirs.url }) }));
    endSpansOfEveryShape(provider);
    await provider.forceFlush();
    expect(ours.requests).toHaveLength(1);
    expect(theirs.requests).toHaveLength(1);
    expect(ours.requests[0]!.headers['content-type']).toBe('application/json');
    // By scope, in the order first met; the span sampled for recording only and the one never ended are not sent.
    expect(spansOf(ours.requests[0]!)).toEqual(['SELECT', 'POST /getQueue', 'query.GetQueue', 'continued 3', 'continued 4']);
    expect(ours.requests[0]!.body).toEqual(theirs.requests[0]!.body);
  });

  it('sends a batch once it is full, and what is left after the delay', async () => {
    const receiver = await startReceiver();
    const provider = providerWith(new OtlpJsonExportProcessor({ exporter: { url: receiver.url }, maxExportBatchSize: 3, scheduledDelayMillis: 200 }));
    const tracer = provider.getTracer('batches');
    for (let i = 0; i < 7; i++) tracer.startSpan(`span ${i}`).end();
    await expect.poll(() => receiver.requests.length).toBe(2);
    expect(receiver.requests.map(spansOf)).toEqual([
      ['span 0', 'span 1', 'span 2'],
      ['span 3', 'span 4', 'span 5'],
    ]);
    // The seventh waits for the delay, not for a flush.
    await expect.poll(() => receiver.requests.length, { timeout: 3000 }).toBe(3);
    expect(spansOf(receiver.requests[2]!)).toEqual(['span 6']);
  });

  it('holds at most maxQueueSize spans while the collector is slow, and drops the rest', async () => {
    const receiver = await startReceiver();
    const release = receiver.hold();
    const provider = providerWith(new OtlpJsonExportProcessor({ exporter: { url: receiver.url }, maxQueueSize: 4, maxExportBatchSize: 2, scheduledDelayMillis: 60_000 }));
    const tracer = provider.getTracer('slow');
    for (let i = 0; i < 10; i++) tracer.startSpan(`span ${i}`).end();
    await expect.poll(() => receiver.requests.length).toBe(2);
    release();
    await provider.forceFlush();
    expect(receiver.requests.map(spansOf)).toEqual([
      ['span 0', 'span 1'],
      ['span 2', 'span 3'],
    ]);
    // Room again once the collector answered.
    tracer.startSpan('after').end();
    await provider.forceFlush();
    expect(spansOf(receiver.requests[2]!)).toEqual(['after']);
  });

  it('reports a refused export on the diagnostic log, throws nothing, and goes on', async () => {
    const receiver = await startReceiver();
    receiver.answerWith(400);
    const errors: string[] = [];
    diag.setLogger({ error: (message) => errors.push(message), warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR);
    const provider = providerWith(new OtlpJsonExportProcessor({ exporter: { url: receiver.url } }));
    provider.getTracer('refused').startSpan('refused').end();
    await provider.forceFlush();
    expect(errors.some((m) => m.includes('span export failed')), errors.join('\n')).toBe(true);
    receiver.answerWith(200);
    provider.getTracer('refused').startSpan('accepted').end();
    await provider.forceFlush();
    expect(receiver.requests.map(spansOf)).toEqual([['refused'], ['accepted']]);
  });

  it('sends with the exporter settings the standard variables give: headers and gzip', async () => {
    const receiver = await startReceiver();
    // As the gateway builds it: no settings of its own, the OTEL_EXPORTER_OTLP_* variables read when it is made.
    const saved = { ...process.env };
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k1', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' });
    let processor: OtlpJsonExportProcessor;
    try {
      processor = new OtlpJsonExportProcessor();
    } finally {
      for (const name of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_COMPRESSION']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
    const provider = providerWith(processor);
    provider.getTracer('settings').startSpan('compressed').end();
    await provider.forceFlush();
    expect(receiver.requests[0]!.headers).toMatchObject({ 'x-collector-key': 'k1', 'content-encoding': 'gzip', 'content-type': 'application/json' });
    expect(spansOf(receiver.requests[0]!)).toEqual(['compressed']);
  });

  it('waits for resource attributes still being detected, and sends them', async () => {
    const receiver = await startReceiver();
    const provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'late', 'host.id': new Promise<string>((resolve) => setTimeout(() => resolve('detected'), 100)) }),
      spanProcessors: [new OtlpJsonExportProcessor({ exporter: { url: receiver.url } })],
    });
    providers.push(provider);
    provider.getTracer('resource').startSpan('early').end();
    await provider.forceFlush();
    const resource = (receiver.requests[0]!.body as { resourceSpans: { resource: { attributes: { key: string; value: unknown }[] } }[] }).resourceSpans[0]!.resource;
    expect(resource.attributes).toContainEqual({ key: 'host.id', value: { stringValue: 'detected' } });
  });

  it('loses a span it cannot write alone: span.end() does not throw and the batch stays well-formed', async () => {
    const receiver = await startReceiver();
    const processor = new OtlpJsonExportProcessor({ exporter: { url: receiver.url } });
    const provider = providerWith(processor);
    const errors: string[] = [];
    diag.setLogger({ error: (message) => errors.push(message), warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR);
    const tracer = provider.getTracer('broken');
    tracer.startSpan('first').end();
    // A span whose attributes throw when read (no SDK span does; a processor must not let it break the batch).
    const broken = tracer.startSpan('broken');
    broken.end();
    const readable = broken as unknown as Parameters<OtlpJsonExportProcessor['onEnd']>[0];
    const attributes = Object.defineProperty({ 'a.key': 'a value' }, 'bad', { enumerable: true, get: () => { throw new Error('unreadable'); } });
    expect(() => processor.onEnd({ ...readable, spanContext: () => readable.spanContext(), name: 'unwritable', attributes, resource: readable.resource, instrumentationScope: readable.instrumentationScope } as typeof readable)).not.toThrow();
    tracer.startSpan('last').end();
    await provider.forceFlush();
    expect(errors.some((m) => m.includes('could not be written')), errors.join('\n')).toBe(true);
    expect(receiver.requests.map(spansOf)).toEqual([['first', 'broken', 'last']]);
  });

  it('leaves no empty scope or resource in the batch when the one span it would have held cannot be written', async () => {
    const receiver = await startReceiver();
    const processor = new OtlpJsonExportProcessor({ exporter: { url: receiver.url } });
    const provider = providerWith(processor);
    diag.setLogger({ error: () => {}, warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR);
    const kept = provider.getTracer('kept').startSpan('kept');
    kept.end();
    const readable = kept as unknown as Parameters<OtlpJsonExportProcessor['onEnd']>[0];
    const attributes = Object.defineProperty({}, 'bad', { enumerable: true, get: () => { throw new Error('unreadable'); } });
    const unwritable = (scope: { name: string }, resource: typeof readable.resource) =>
      ({ ...readable, spanContext: () => readable.spanContext(), name: 'unwritable', attributes, resource, instrumentationScope: scope }) as typeof readable;
    // The first span of a scope of its own, then the first of a resource of its own: neither is written.
    processor.onEnd(unwritable({ name: 'only-unwritable' }, readable.resource));
    processor.onEnd(unwritable({ name: 'elsewhere' }, resourceFromAttributes({ 'service.name': 'unwritable only' })));
    await provider.forceFlush();
    const resources = receiver.requests.flatMap((r) => (r.body as { resourceSpans: { scopeSpans: { scope: { name: string }; spans: { name: string }[] }[] }[] }).resourceSpans);
    expect(resources.map((rs) => rs.scopeSpans.map((ss) => [ss.scope.name, ss.spans.map((sp) => sp.name)]))).toEqual([[['kept', ['kept']]]]);
  });

  it('sends what is pending at shutdown, and nothing after', async () => {
    const receiver = await startReceiver();
    const provider = providerWith(new OtlpJsonExportProcessor({ exporter: { url: receiver.url }, scheduledDelayMillis: 60_000 }));
    const tracer = provider.getTracer('stopping');
    tracer.startSpan('before').end();
    await provider.shutdown();
    tracer.startSpan('after').end();
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.requests.map(spansOf)).toEqual([['before']]);
  });
});
