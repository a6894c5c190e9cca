import { describe, expect, it } from 'vitest';
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { fastJsonTraceSerializer } from '../src/telemetry/otlp-json.js';

// The gateway's OTLP JSON encoding (src/telemetry/otlp-json.ts) against the SDK's own serializer, on spans of every
// shape an exporter may be handed: the two requests must decode to the same value.

const decode = (bytes: Uint8Array | undefined) => JSON.parse(Buffer.from(bytes!).toString('utf8')) as unknown;

async function spansOfEveryShape(): Promise<ReadableSpan[]> {
  const exporter = new InMemorySpanExporter();
  // Two providers: two resources (the SDK's default one, each its own object).
  const providers = [new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }), new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })];
  const [main, other] = providers;
  const gateway = main!.getTracer('public-services-gateway', '0.1.0');
  const plain = main!.getTracer('graphql');
  const versioned = main!.getTracer('prisma', '7.10.1', { schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' });

  const server = gateway.startSpan('POST /getQueue', {
    kind: SpanKind.SERVER,
    attributes: {
      'http.request.method': 'POST',
      'server.port': 4318,
      ratio: 0.25,
      'not.a.number': Number.NaN,
      'huge.integer': 2 ** 60,
      negative: -7,
      ok: true,
      'a "quoted"\nkey': 'line\nbreak, "quotes", \\ backslash, \u0001 control, кириллица, emoji \u{1F600}',
      labels: ['bench', 'group-1'],
      mixed: [1, 'two', false, null],
      nested: { inner: { deep: 'yes' }, list: [1.5] } as never,
      bytes: new Uint8Array([0, 1, 254, 255]) as never,
      empty: '',
    },
  });
  const parent = trace.setSpan(ROOT_CONTEXT, server);
  const operation = plain.startSpan('query.GetQueue', { attributes: { 'graphql.execute.operationName': 'GetQueue' } }, parent);
  operation.addEvent('cache miss');
  operation.addEvent('detail', { rows: 3, where: 'queue' });
  operation.recordException(new Error('boom "x"'));
  operation.setStatus({ code: SpanStatusCode.ERROR, message: 'failed "badly"' });
  operation.end();
  const sql = versioned.startSpan('prisma:client:db_query', { kind: SpanKind.CLIENT, attributes: { 'db.query.text': 'SELECT "name" FROM "Queue" WHERE "name" = $1' } }, trace.setSpan(parent, operation));
  sql.setStatus({ code: SpanStatusCode.OK });
  sql.end();
  server.end();

  // A remote parent with a trace state; links with and without attributes, one of them not sampled.
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: createTraceState('vendor=value,other=1'),
  });
  const linked = gateway.startSpan(
    'GET',
    {
      kind: SpanKind.CONSUMER,
      links: [
        { context: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true } },
        { context: { traceId: '0af7651916cd43dd8448eb211c80319d', spanId: 'b7ad6b7169203332', traceFlags: TraceFlags.NONE }, attributes: { why: 'batched' } },
      ],
    },
    remote,
  );
  linked.end();
  for (const kind of [SpanKind.INTERNAL, SpanKind.PRODUCER]) other!.getTracer('other').startSpan(`kind ${kind}`, { kind }).end();

  await Promise.all(providers.map((p) => p.forceFlush()));
  return exporter.getFinishedSpans();
}

describe('OTLP JSON encoding', () => {
  it('encodes spans of every shape as the SDK serializer does', async () => {
    const spans = await spansOfEveryShape();
    expect(spans.length).toBe(6);
    const expected = decode(JsonTraceSerializer.serializeRequest(spans));
    expect(decode(fastJsonTraceSerializer.serializeRequest(spans))).toEqual(expected);
    // The shape is really there: two resources, three scopes under the first, events, links, a trace state.
    const text = JSON.stringify(expected);
    for (const part of ['"bytesValue"', '"kvlistValue"', '"arrayValue"', '"doubleValue"', '"events"', '"traceState":"vendor=value,other=1"', '"schemaUrl"', 'batched']) expect(text).toContain(part);
  });

  it('encodes one span and an empty batch alike too', async () => {
    const spans = await spansOfEveryShape();
    for (const batch of [spans.slice(0, 1), []]) expect(decode(fastJsonTraceSerializer.serializeRequest(batch))).toEqual(decode(JsonTraceSerializer.serializeRequest(batch)));
  });
});
