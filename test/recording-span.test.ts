import { diag, DiagLogLevel, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import { hrTimeToMilliseconds, millisToHrTime, suppressTracing, W3CTraceContextPropagator } from '@opentelemetry/core';
import { ParentBasedSampler, SamplingDecision, TracerProvider, type ReadableSpan, type Sampler, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingSpansHold, RecordingSpan, spanStarter } from '../src/telemetry/recording-span.js';

// A RecordingSpan (src/telemetry/recording-span.ts) stands for the SDK's span on every request: the same calls on
// both must leave the same span (what an exporter reads of it), tell its processors the same things and log the same
// warnings. Each script below runs on a span of each kind, started alike, under the same sampler.

/** The gateway's own sampler's shape: statements without a parent are not recorded. */
const sampler: Sampler = new ParentBasedSampler({
  root: {
    shouldSample: (_context, _traceId, name, _kind, attributes) => ({ decision: name === 'unrecorded' || attributes['db.system.name'] !== undefined ? SamplingDecision.NOT_RECORD : SamplingDecision.RECORD_AND_SAMPLED }),
    toString: () => 'test',
  },
});

interface Seen {
  started: { span: ReadableSpan; parent: Context }[];
  ended: ReadableSpan[];
}

function collector(): SpanProcessor & Seen {
  const seen: Seen = { started: [], ended: [] };
  return Object.assign(seen, {
    onStart: (span: ReadableSpan, parent: Context) => void seen.started.push({ span, parent }),
    onEnd: (span: ReadableSpan) => void seen.ended.push(span),
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  });
}

/** Both kinds of span, over one resource: `sdk` the SDK's Tracer, `recording` the gateway's starter. */
function starters() {
  const sdkSeen = collector();
  const recordingSeen = collector();
  const sdkTracer = new TracerProvider({ sampler, spanProcessors: [sdkSeen] }).getTracer('scope', '1.2.3');
  // Its own provider's processors see nothing: a RecordingSpan is handed to the processors of its setup.
  const recordingTracer = new TracerProvider({ sampler }).getTracer('scope', '1.2.3');
  const recording = spanStarter(recordingTracer, { sampler, processors: [recordingSeen] });
  return {
    sdk: { start: (name: string, kind: SpanKind, attributes: Attributes, parent: Context) => sdkTracer.startSpan(name, { kind, attributes }, parent), seen: sdkSeen },
    recording: { start: recording, seen: recordingSeen },
  };
}

const warnings: string[] = [];
diag.setLogger(
  {
    error: (message) => void warnings.push(`error ${message}`),
    warn: (message) => void warnings.push(`warn ${message}`),
    info: () => {},
    debug: (message) => void warnings.push(`debug ${message}`),
    verbose: () => {},
  },
  { logLevel: DiagLogLevel.ALL, suppressOverrideMessage: true },
);
afterEach(() => void (warnings.length = 0));

/** What an exporter reads of a span, times aside (compared on their own), ids as their relations. */
function view(span: ReadableSpan) {
  return {
    name: span.name,
    kind: span.kind,
    traceFlags: span.spanContext().traceFlags,
    parent: span.parentSpanContext?.spanId,
    attributes: span.attributes,
    droppedAttributesCount: span.droppedAttributesCount,
    events: span.events.map((e) => ({ name: e.name, attributes: e.attributes, droppedAttributesCount: e.droppedAttributesCount })),
    droppedEventsCount: span.droppedEventsCount,
    links: span.links,
    droppedLinksCount: span.droppedLinksCount,
    status: span.status,
    ended: span.ended,
    resource: span.resource.attributes,
    scope: span.instrumentationScope,
  };
}

/** Runs `script` on a span of each kind; returns both spans, what their processors saw and the warnings each logged. */
function both(name: string, kind: SpanKind, attributes: Attributes, parent: Context, script: (span: Span) => void) {
  const kinds = starters();
  const run = ({ start, seen }: (typeof kinds)['sdk']) => {
    warnings.length = 0;
    const span = start(name, kind, attributes, parent);
    script(span);
    const ids = span.spanContext();
    return { span, seen, warnings: warnings.map((w) => w.replaceAll(ids.traceId, 'TRACE').replaceAll(ids.spanId, 'SPAN')) };
  };
  return { sdk: run(kinds.sdk), recording: run(kinds.recording) };
}

function expectAlike(outcome: ReturnType<typeof both>) {
  const { sdk, recording } = outcome;
  expect(recording.span).toBeInstanceOf(RecordingSpan);
  expect(recording.warnings).toEqual(sdk.warnings);
  expect(recording.seen.started.length).toBe(sdk.seen.started.length);
  expect(recording.seen.ended.map(view)).toEqual(sdk.seen.ended.map(view));
  expect(view(recording.span as unknown as ReadableSpan)).toEqual(view(sdk.span as unknown as ReadableSpan));
  expect(recording.span.isRecording()).toBe(sdk.span.isRecording());
}

const START = { 'http.request.method': 'POST', 'url.path': '/getQueue', 'server.port': 8080, 'user_agent.original': undefined, flag: true };

describe('a RecordingSpan does what the SDK span does', () => {
  it('keeps its start attributes (undefined left out), then each one set: replaced, added, invalid or empty-keyed refused', () => {
    const outcome = both('POST', SpanKind.SERVER, START, ROOT_CONTEXT, (span) => {
      span.setAttribute('url.path', '/createQueue');
      span.setAttributes({ 'http.response.status_code': 200, labels: ['a', 'b'], nested: { deep: [1, 2] } as never, missing: undefined });
      span.setAttribute('', 'no key');
      span.setAttribute('bad', (() => 1) as never);
      span.setAttribute('mixed', [1, 'two', null] as never);
      span.updateName('POST /createQueue');
      span.end();
    });
    expectAlike(outcome);
    expect(outcome.recording.span.spanContext().traceFlags).toBe(1);
    expect(outcome.recording.warnings.length).toBeGreaterThan(0);
  });

  it('takes only the own start attributes, as the SDK does', () => {
    const attributes = Object.assign(Object.create({ inherited: 'not taken' }) as Attributes, { own: 'taken' });
    const outcome = both('own', SpanKind.SERVER, attributes, ROOT_CONTEXT, (span) => span.end());
    expectAlike(outcome);
    expect((outcome.recording.span as unknown as ReadableSpan).attributes).toEqual({ own: 'taken' });
  });

  it('copies its start attributes: the object it was given is not changed by what is set later', () => {
    const given = { 'db.query.text': 'SELECT 1' };
    both('SELECT', SpanKind.CLIENT, given, trace.setSpanContext(ROOT_CONTEXT, { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }), (span) => {
      span.setAttribute('db.query.text', 'changed').setAttribute('gateway.request_id', 'r').end();
    });
    expect(given).toEqual({ 'db.query.text': 'SELECT 1' });
  });

  it('keeps 128 attributes and counts the rest as dropped, warning once', () => {
    expectAlike(
      both('many', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => {
        for (let i = 0; i < 140; i++) span.setAttribute(`a${i}`, i);
        span.setAttribute('a5', 'replaced at the limit');
        span.setAttribute('late', [1]);
        span.end();
      }),
    );
  });

  it('records events and exceptions, keeping the last 128 events', () => {
    const outcome = both('events', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => {
      span.addEvent('plain');
      span.addEvent('with attributes', { n: 1, list: ['x'], object: { no: 1 } as never });
      span.recordException(Object.assign(new Error('boom'), { code: 'E_BOOM' }));
      span.recordException(new TypeError('typed'));
      span.recordException('a string');
      span.recordException({} as Error);
      for (let i = 0; i < 130; i++) span.addEvent(`e${i}`);
      span.end();
    });
    expectAlike(outcome);
  });

  it('puts an event at the time it is given, or now', () => {
    const outcome = both('event times', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => {
      span.addEvent('at a time', Date.UTC(2026, 10, 26));
      span.addEvent('with both', { n: 2 }, new Date(Date.UTC(2026, 10, 27)));
      span.addEvent('as an hrtime', [1_700_000_000, 5]);
      span.addEvent('now');
      span.end();
    });
    expectAlike(outcome);
    const times = (s: Span) => (s as unknown as ReadableSpan).events.map((e) => e.time);
    expect(times(outcome.recording.span).slice(0, 3)).toEqual(times(outcome.sdk.span).slice(0, 3));
    const recording = outcome.recording.span as unknown as ReadableSpan;
    const now = hrTimeToMilliseconds(recording.events[3]!.time);
    expect(now).toBeGreaterThanOrEqual(hrTimeToMilliseconds(recording.startTime));
    expect(now).toBeLessThanOrEqual(hrTimeToMilliseconds(recording.endTime));
  });

  it('follows the status rules: an error keeps a string message only, OK is final, UNSET changes nothing', () => {
    expectAlike(
      both('status', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: 42 as never });
        span.setStatus({ code: SpanStatusCode.UNSET });
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
        span.setStatus({ code: SpanStatusCode.OK });
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'too late' });
        span.end();
      }),
    );
  });

  it('keeps links within their limit', () => {
    const other = { traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 };
    expectAlike(
      both('links', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => {
        span.addLink({ context: other, attributes: { why: 'batch', bad: (() => 1) as never } });
        span.addLinks(Array.from({ length: 130 }, (_, i) => ({ context: other, attributes: { i } })));
        span.end();
      }),
    );
  });

  it('ends once: a second end, and every change after the first, is refused with a warning', () => {
    const outcome = both('ended', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => {
      span.end();
      span.end();
      span.setAttribute('after', 1).addEvent('after').updateName('renamed').setStatus({ code: SpanStatusCode.ERROR });
    });
    expectAlike(outcome);
    expect(outcome.recording.seen.ended).toHaveLength(1);
  });

  it('keeps its times as the SDK does: a start now, an end given or measured, never before the start', () => {
    const before = Date.now();
    const outcome = both('timed', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => span.end(new Date(Date.UTC(2020, 0, 1))));
    expectAlike(outcome);
    const recording = outcome.recording.span as unknown as ReadableSpan;
    expect(hrTimeToMilliseconds(recording.startTime)).toBeGreaterThanOrEqual(before);
    // An end before the start: the span lasts no time, as the SDK's does.
    expect(recording.endTime).toEqual(recording.startTime);
    expect(recording.duration).toEqual([0, 0]);

    const measured = both('measured', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => span.end()).recording.span as unknown as ReadableSpan;
    expect(hrTimeToMilliseconds(measured.endTime)).toBeGreaterThanOrEqual(hrTimeToMilliseconds(measured.startTime));
    expect(hrTimeToMilliseconds(measured.duration)).toBeCloseTo(hrTimeToMilliseconds(measured.endTime) - hrTimeToMilliseconds(measured.startTime), 3);

    const explicit = both('explicit', SpanKind.INTERNAL, {}, ROOT_CONTEXT, (span) => span.end(millisToHrTime(Date.now() + 5)));
    expectAlike(explicit);
  });

  it('continues a remote parent (traceparent): its trace, its state, the parent span as its parent', () => {
    const parent = new W3CTraceContextPropagator().extract(ROOT_CONTEXT, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=x' }, {
      get: (carrier, key) => carrier[key as keyof typeof carrier],
      keys: (carrier) => Object.keys(carrier),
    });
    const outcome = both('child', SpanKind.SERVER, {}, parent, (span) => span.end());
    expectAlike(outcome);
    const { recording, sdk } = outcome;
    expect(recording.span.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(recording.span.spanContext().traceState?.serialize()).toBe(sdk.span.spanContext().traceState?.serialize());
    expect((recording.span as unknown as ReadableSpan).parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    // Its processors are told the context it started under.
    expect(recording.seen.started[0]!.parent).toBe(parent);
  });

  it('is not recorded when the sampler leaves it out or tracing is suppressed, as the SDK decides', () => {
    for (const [name, attributes, parent] of [
      ['unrecorded', {}, ROOT_CONTEXT],
      ['SELECT', { 'db.system.name': 'postgresql' }, ROOT_CONTEXT],
      ['suppressed', {}, suppressTracing(ROOT_CONTEXT)],
    ] as const) {
      const { sdk, recording } = both(name, SpanKind.CLIENT, attributes, parent, (span) => span.setAttribute('x', 1).end());
      expect(recording.span).not.toBeInstanceOf(RecordingSpan);
      expect(recording.span.isRecording()).toBe(false);
      expect(recording.span.spanContext().traceFlags).toBe(sdk.span.spanContext().traceFlags);
      expect(recording.seen.started).toHaveLength(0);
      expect(recording.seen.ended).toHaveLength(0);
    }
  });

  it('leaves a span whose start attributes are not all strings, numbers and booleans to the SDK', () => {
    const { recording, sdk } = both('arrays', SpanKind.INTERNAL, { labels: ['a'], n: 1 }, ROOT_CONTEXT, (span) => span.end());
    expect(recording.span).not.toBeInstanceOf(RecordingSpan);
    expect(view(recording.span as unknown as ReadableSpan)).toEqual(view(sdk.span as unknown as ReadableSpan));
  });
});

describe('where the SDK makes every span', () => {
  it('is an environment that changes a span: limits, a sampler, a configuration file, the SDK off', () => {
    expect(recordingSpansHold({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_BSP_SCHEDULE_DELAY: '5', OTEL_SERVICE_NAME: 'g' })).toBe(true);
    expect(recordingSpansHold({ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_SAMPLER: ' ' })).toBe(true);
    for (const name of [
      'OTEL_ATTRIBUTE_COUNT_LIMIT',
      'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
      'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT',
      'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
      'OTEL_SPAN_EVENT_COUNT_LIMIT',
      'OTEL_SPAN_LINK_COUNT_LIMIT',
      'OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT',
      'OTEL_LINK_ATTRIBUTE_COUNT_LIMIT',
      'OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT',
      'OTEL_SPAN_ATTRIBUTE_PER_LINK_COUNT_LIMIT',
      'OTEL_TRACES_SAMPLER',
      'OTEL_CONFIG_FILE',
      'OTEL_EXPERIMENTAL_CONFIG_FILE',
    ]) {
      expect(recordingSpansHold({ [name]: '16' }), name).toBe(false);
    }
    expect(recordingSpansHold({ OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });

  it('starts every span on the SDK when no setup is given', () => {
    const tracer = new TracerProvider({ sampler }).getTracer('scope');
    const span = spanStarter(tracer, undefined)('x', SpanKind.INTERNAL, { a: 1 }, ROOT_CONTEXT);
    expect(span).not.toBeInstanceOf(RecordingSpan);
    expect(span.isRecording()).toBe(true);
  });
});

