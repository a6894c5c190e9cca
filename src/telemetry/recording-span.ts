import {
  diag,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  type TimeInput,
  type Tracer,
} from '@opentelemetry/api';
import { addHrTimes, cleanAttributes, cleanSimpleAttributes, hrTimeDuration, hrTime, isTimeInput, isTimeInputHrTime, isTracingSuppressed, maybeAddAttribute, millisToHrTime, AddAttributeDecision } from '@opentelemetry/core';
import { RandomIdGenerator, SamplingDecision, type ReadableSpan, type Sampler, type SpanProcessor, type TimedEvent } from '@opentelemetry/sdk-trace';

// The spans every request starts (its HTTP server span, its statements' spans) are made here rather than by the SDK's
// Tracer, which checks each attribute given at a span's start twice (once for the sampler, once for the span), fans
// start and end out through a processor of processors and keeps its clock in arrays converted at every step, a part
// of what tracing adds to a one-row read (docs/performance.md). A RecordingSpan behaves as the SDK's span
// does, call for call (limits, events, exceptions, status rules, warnings on an ended span; test/recording-span.test.ts
// runs the same calls on both), but only under the SDK's default limits and with the gateway's own sampler and
// processors: when the environment sets either (OTEL_*_LIMIT, OTEL_TRACES_SAMPLER, a configuration file) or turns the
// SDK off, `spanStarter` hands every span to the SDK's Tracer.

/** Starts a span of `kind` under `parent`: recording, or a non-recording one the sampler left out. */
export type SpanStarter = (name: string, kind: SpanKind, attributes: Attributes, parent: Context) => Span;

/** What a RecordingSpan shares with the SDK's spans: the sampler that decides and the processors that see it. */
export interface RecordingSetup {
  sampler: Sampler;
  processors: readonly SpanProcessor[];
}

/** The SDK's default span limits (TracerProvider), the only ones a RecordingSpan keeps. */
const DEFAULT_SPAN_LIMITS = {
  attributeCountLimit: 128,
  attributeValueLengthLimit: Infinity,
  eventCountLimit: 128,
  linkCountLimit: 128,
  attributePerEventCountLimit: 128,
  attributePerLinkCountLimit: 128,
} as const;

/** Variables with which the SDK's spans would differ from a RecordingSpan (limits, sampler, configuration, off). */
const SDK_SETTINGS = /^OTEL_(?:(?:SPAN_|EVENT_|LINK_)?ATTRIBUTE_\w*LIMIT|SPAN_\w*_LIMIT|TRACES_SAMPLER|(?:EXPERIMENTAL_)?CONFIG_FILE)$/;

/** Whether a RecordingSpan may stand for the SDK's span in this environment. */
export function recordingSpansHold(env: NodeJS.ProcessEnv): boolean {
  if (/^(?:true|1)$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? '')) return false;
  return !Object.keys(env).some((name) => SDK_SETTINGS.test(name) && env[name]?.trim());
}

const isPrimitive = (value: unknown): value is string | number | boolean => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/**
 * The SDK's Tracer starts spans whose start attributes are not all strings, numbers and booleans, and every span when
 * `setup` is absent; the rest are RecordingSpans.
 */
export function spanStarter(tracer: Tracer, setup: RecordingSetup | undefined): SpanStarter {
  const bySdk: SpanStarter = (name, kind, attributes, parent) => tracer.startSpan(name, { kind, attributes }, parent);
  if (setup === undefined) return bySdk;
  const ids = new RandomIdGenerator();
  const { sampler, processors } = setup;
  // The resource and scope the SDK gives this tracer's spans, read off one of them (started, never ended: never sent).
  let origin: Pick<ReadableSpan, 'resource' | 'instrumentationScope'> | undefined;
  return (name, kind, attributes, parent) => {
    const own: Attributes = {};
    let count = 0;
    for (const key in attributes) {
      // Own keys only, as the SDK reads them (Object.entries).
      if (!Object.hasOwn(attributes, key)) continue;
      const value = attributes[key];
      if (value === undefined) continue;
      if (!isPrimitive(value) || key.length === 0) return bySdk(name, kind, attributes, parent);
      own[key] = value;
      count++;
    }
    if (count > DEFAULT_SPAN_LIMITS.attributeCountLimit) return bySdk(name, kind, attributes, parent);
    if (isTracingSuppressed(parent)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const parentContext = trace.getSpanContext(parent);
    const validParent = parentContext !== undefined && isSpanContextValid(parentContext) ? parentContext : undefined;
    const spanId = ids.generateSpanId();
    const traceId = validParent ? validParent.traceId : ids.generateTraceId();
    const sampling = sampler.shouldSample(parent, traceId, name, kind, own, []);
    const spanContext: SpanContext = {
      traceId,
      spanId,
      traceFlags: sampling.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      traceState: sampling.traceState ?? validParent?.traceState,
    };
    if (sampling.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    origin ??= tracer.startSpan('gateway.resource', { root: true }) as unknown as ReadableSpan;
    const span = new RecordingSpan(name, kind, spanContext, validParent, own, count, origin, processors);
    if (sampling.attributes) span.setAttributes(sampling.attributes);
    for (const processor of processors) processor.onStart(span, parent);
    return span;
  };
}

/** The SDK's span (sdk-trace's SpanImpl) under its default limits, started by `spanStarter`. */
export class RecordingSpan implements Span, ReadableSpan {
  readonly links: Link[] = [];
  readonly events: TimedEvent[] = [];
  readonly startTime: HrTime;
  readonly resource: ReadableSpan['resource'];
  readonly instrumentationScope: ReadableSpan['instrumentationScope'];
  name: string;
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  endTime: HrTime = [0, 0];
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  private done = false;
  private elapsed: HrTime = [-1, -1];
  private readonly performanceStart: number;
  private readonly performanceOffset: number;

  constructor(
    name: string,
    readonly kind: SpanKind,
    private readonly identity: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    readonly attributes: Attributes,
    private attributesCount: number,
    origin: Pick<ReadableSpan, 'resource' | 'instrumentationScope'>,
    private readonly processors: readonly SpanProcessor[],
  ) {
    const now = Date.now();
    this.name = name;
    this.performanceStart = performance.now();
    this.performanceOffset = now - (this.performanceStart + performance.timeOrigin);
    this.startTime = millisToHrTime(now);
    this.resource = origin.resource;
    this.instrumentationScope = origin.instrumentationScope;
  }

  spanContext(): SpanContext {
    return this.identity;
  }

  get ended(): boolean {
    return this.done;
  }

  get duration(): HrTime {
    return this.elapsed;
  }

  isRecording(): boolean {
    return !this.done;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (this.isEnded()) return this;
    // A string, number or boolean under the default limits (no length limit) is kept as it is, as the SDK keeps it.
    if (isPrimitive(value) && key.length > 0) {
      if (!Object.hasOwn(this.attributes, key)) {
        if (this.attributesCount >= DEFAULT_SPAN_LIMITS.attributeCountLimit) return this.dropAttribute();
        this.attributesCount++;
      }
      this.attributes[key] = value;
      return this;
    }
    const decision = maybeAddAttribute({ key, value, attributes: this.attributes, limits: DEFAULT_SPAN_LIMITS, currentAttributesCount: this.attributesCount });
    if (decision === AddAttributeDecision.DROP_LIMIT_REACHED) return this.dropAttribute();
    if (decision === AddAttributeDecision.ADD_NEW) this.attributesCount++;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key]);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.isEnded()) return this;
    if (this.events.length >= DEFAULT_SPAN_LIMITS.eventCountLimit) {
      if (this.droppedEventsCount === 0) diag.debug('Dropping extra events.');
      this.events.shift();
      this.droppedEventsCount++;
    }
    let attributes: Attributes | undefined;
    if (isTimeInput(attributesOrTime)) {
      if (!isTimeInput(time)) time = attributesOrTime;
    } else {
      attributes = attributesOrTime;
    }
    this.events.push({
      name,
      time: this.timeOf(time),
      ...cleanSimpleAttributes(attributes, { attributeCountLimit: DEFAULT_SPAN_LIMITS.attributePerEventCountLimit, attributeValueLengthLimit: DEFAULT_SPAN_LIMITS.attributeValueLengthLimit }),
    });
    return this;
  }

  addLink(link: Link): this {
    if (this.isEnded()) return this;
    if (this.links.length >= DEFAULT_SPAN_LIMITS.linkCountLimit) {
      if (this.droppedLinksCount === 0) diag.debug('Dropping extra links.');
      this.links.shift();
      this.droppedLinksCount++;
    }
    this.links.push({
      context: link.context,
      ...cleanAttributes(link.attributes, { attributeCountLimit: DEFAULT_SPAN_LIMITS.attributePerLinkCountLimit, attributeValueLengthLimit: DEFAULT_SPAN_LIMITS.attributeValueLengthLimit }),
    });
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.isEnded() || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this;
    const next: SpanStatus = { code: status.code };
    if (status.code === SpanStatusCode.ERROR) {
      if (typeof status.message === 'string') next.message = status.message;
      else if (status.message != null) diag.warn(`Dropping invalid status.message of type '${typeof status.message}', expected 'string'`);
    }
    this.status = next;
    return this;
  }

  updateName(name: string): this {
    if (!this.isEnded()) this.name = name;
    return this;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') {
      attributes['exception.message'] = exception;
    } else if (exception) {
      if (exception.code) attributes['exception.type'] = exception.code.toString();
      else if (exception.name) attributes['exception.type'] = exception.name;
      if (exception.message) attributes['exception.message'] = exception.message;
      if (exception.stack) attributes['exception.stacktrace'] = exception.stack;
    }
    if (attributes['exception.type'] || attributes['exception.message']) this.addEvent('exception', attributes, time);
    else diag.warn(`Failed to record an exception ${String(exception)}`);
  }

  end(endTime?: TimeInput): void {
    if (this.isEnded()) {
      diag.error(`${this.name} ${this.identity.traceId}-${this.identity.spanId} - You can only call end() on a span once.`);
      return;
    }
    this.endTime = this.timeOf(endTime);
    this.elapsed = hrTimeDuration(this.startTime, this.endTime);
    if (this.elapsed[0] < 0) {
      diag.warn('Inconsistent start and end time, startTime > endTime. Setting span duration to 0ms.', this.startTime, this.endTime);
      this.endTime = [this.startTime[0], this.startTime[1]];
      this.elapsed = [0, 0];
    }
    if (this.droppedEventsCount > 0) diag.warn(`Dropped ${this.droppedEventsCount} events because eventCountLimit reached`);
    if (this.droppedLinksCount > 0) diag.warn(`Dropped ${this.droppedLinksCount} links because linkCountLimit reached`);
    this.done = true;
    for (const processor of this.processors) processor.onEnd(this);
  }

  private dropAttribute(): this {
    if (++this.droppedAttributesCount === 1) diag.warn('Dropping extra attributes.');
    return this;
  }

  /** A time as the SDK's span reads it: a performance.now() reading, epoch milliseconds, a Date or an HrTime; now, by default. */
  private timeOf(input: TimeInput | undefined): HrTime {
    if (typeof input === 'number' && input <= performance.now()) return hrTime(input + this.performanceOffset);
    if (typeof input === 'number') return millisToHrTime(input);
    if (input instanceof Date) return millisToHrTime(input.getTime());
    if (isTimeInputHrTime(input)) return input;
    return addHrTimes(this.startTime, millisToHrTime(performance.now() - this.performanceStart));
  }

  private isEnded(): boolean {
    if (this.done) {
      const which = `{traceId: ${this.identity.traceId}, spanId: ${this.identity.spanId}}`;
      diag.warn(`Cannot execute the operation on ended Span ${which}`, new Error(`Operation attempted on ended Span ${which}`));
    }
    return this.done;
  }
}
