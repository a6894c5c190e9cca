import type { Attributes, HrTime, Link } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';

// OTLP JSON (the JSON encoding of an ExportTraceServiceRequest) written straight into bytes, span by span, as each
// span ends (src/telemetry/otlp-export.ts), in place of @opentelemetry/otlp-transformer's JSON serializer. That one
// keeps every ended span until its batch is sent, then builds an object tree of the batch (an object per attribute, a
// BigInt per timestamp) and JSON.stringify's it: for a request of two small spans it was the largest single part of
// what tracing cost (docs/performance.md). The request written here is the library's, field for field, in its order
// (test/otlp-export.test.ts parses both): hex ids, timestamps as decimal strings, enums as numbers (`kind` one above
// the API's), absent fields left out as JSON.stringify leaves out undefined, spans grouped by resource, then by
// instrumentation scope, in the order first met.

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

const SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE = 0x100;
const SPAN_FLAGS_CONTEXT_IS_REMOTE = 0x200;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** A growing byte buffer. Text that needs no escaping is copied a character at a time, without a call into C++. */
export class JsonBytes {
  private bytes: Buffer;
  private at = 0;

  constructor(size = 64 * 1024) {
    this.bytes = Buffer.allocUnsafe(size);
  }

  get length(): number {
    return this.at;
  }

  /** What has been written, until the next write or reset. */
  written(): Buffer {
    return this.bytes.subarray(0, this.at);
  }

  /** Empty again, its memory kept. */
  reset(): void {
    this.at = 0;
  }

  /** Back to a length it had: what was written since is dropped. */
  truncate(length: number): void {
    this.at = Math.min(this.at, length);
  }

  private room(size: number): void {
    if (this.at + size <= this.bytes.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.at + size));
    this.bytes.copy(next, 0, 0, this.at);
    this.bytes = next;
  }

  raw(fragment: Uint8Array): this {
    this.room(fragment.length);
    this.bytes.set(fragment, this.at);
    this.at += fragment.length;
    return this;
  }

  /** Text known to be printable ASCII without quotes or backslashes (punctuation, digits). */
  ascii(text: string): this {
    const size = text.length;
    this.room(size);
    const bytes = this.bytes;
    let at = this.at;
    for (let i = 0; i < size; i++) bytes[at++] = text.charCodeAt(i);
    this.at = at;
    return this;
  }

  /** A JSON string: quoted, escaped as JSON.stringify escapes it. */
  string(text: string): this {
    const size = text.length;
    this.room(size + 2);
    const bytes = this.bytes;
    const start = this.at;
    let at = start;
    bytes[at++] = QUOTE;
    for (let i = 0; i < size; i++) {
      const code = text.charCodeAt(i);
      // Anything to escape, or beyond ASCII: JSON.stringify writes it, then UTF-8.
      if (code < 0x20 || code > 0x7e || code === QUOTE || code === BACKSLASH) return this.escaped(text, start);
      bytes[at++] = code;
    }
    bytes[at++] = QUOTE;
    this.at = at;
    return this;
  }

  private escaped(text: string, start: number): this {
    this.at = start;
    const json = JSON.stringify(text);
    this.room(Buffer.byteLength(json));
    this.at += this.bytes.write(json, this.at, 'utf8');
    return this;
  }
}

const bytesOf = (text: string) => Buffer.from(text, 'utf8');

/**
 * What is known of an attribute key: its `{"key":"<key>","value":` and, for values that repeat from span to span (a
 * method, a route, a statement's text, a status code), whole entries, copied rather than written again. A key's first
 * VALUES_PER_KEY values are kept; one whose values never repeat (a request id) keeps only those.
 */
interface KeyEntries {
  prefix: Buffer;
  values: Map<string | number | boolean, Buffer>;
}
const keyEntries = new Map<string, KeyEntries>();
const VALUES_PER_KEY = 32;
const LONGEST_KEPT_VALUE = 1024;

function entriesOf(key: string): KeyEntries {
  let entries = keyEntries.get(key);
  if (entries === undefined) {
    entries = { prefix: bytesOf(`{"key":${JSON.stringify(key)},"value":`), values: new Map() };
    if (keyEntries.size < 4096) keyEntries.set(key, entries);
  }
  return entries;
}

function keyValue(out: JsonBytes, key: string, value: unknown): void {
  const entries = entriesOf(key);
  const kept = typeof value === 'string' ? value.length <= LONGEST_KEPT_VALUE : typeof value === 'number' || typeof value === 'boolean';
  if (kept) {
    const whole = entries.values.get(value as string | number | boolean);
    if (whole !== undefined) {
      out.raw(whole);
      return;
    }
    if (entries.values.size < VALUES_PER_KEY) {
      const entry = new JsonBytes(entries.prefix.length + 64);
      anyValue(entry.raw(entries.prefix), value);
      const bytes = Buffer.from(entry.ascii('}').written());
      entries.values.set(value as string | number | boolean, bytes);
      out.raw(bytes);
      return;
    }
  }
  anyValue(out.raw(entries.prefix), value);
  out.ascii('}');
}

/** A number as JSON.stringify writes it (NaN and the infinities as null). */
const numberText = (value: number) => (Number.isFinite(value) ? String(value) : 'null');

/** An attribute value as OTLP's AnyValue. */
function anyValue(out: JsonBytes, value: unknown): void {
  switch (typeof value) {
    case 'string':
      out.ascii('{"stringValue":').string(value).ascii('}');
      return;
    case 'number':
      out.ascii(Number.isInteger(value) ? '{"intValue":' : '{"doubleValue":').ascii(numberText(value)).ascii('}');
      return;
    case 'boolean':
      out.ascii(value ? '{"boolValue":true}' : '{"boolValue":false}');
      return;
    case 'object':
      if (value === null) break;
      if (value instanceof Uint8Array) {
        out.ascii('{"bytesValue":"').ascii(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')).ascii('"}');
        return;
      }
      if (Array.isArray(value)) {
        out.ascii('{"arrayValue":{"values":[');
        value.forEach((item, i) => {
          if (i > 0) out.ascii(',');
          anyValue(out, item);
        });
        out.ascii(']}}');
        return;
      }
      out.ascii('{"kvlistValue":{"values":[');
      keyValues(out, value as Record<string, unknown>);
      out.ascii(']}}');
      return;
  }
  out.ascii('{}');
}

function keyValues(out: JsonBytes, values: Record<string, unknown>): void {
  let first = true;
  for (const key of Object.keys(values)) {
    if (!first) out.ascii(',');
    first = false;
    keyValue(out, key, values[key]);
  }
}

function attributes(out: JsonBytes, values: Attributes | undefined): JsonBytes {
  out.ascii('[');
  if (values !== undefined) keyValues(out, values);
  return out.ascii(']');
}

/** Nanoseconds since the epoch as decimal digits, without the BigInt the library makes. */
function nanos(time: HrTime): string {
  const seconds = Math.trunc(time[0]);
  const fraction = String(Math.trunc(time[1]));
  return seconds === 0 ? fraction : `${seconds}${'000000000'.slice(fraction.length)}${fraction}`;
}

const flags = (traceFlags: number, isRemote: boolean | undefined) => (traceFlags & 0xff) | SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE | (isRemote ? SPAN_FLAGS_CONTEXT_IS_REMOTE : 0);

function event(out: JsonBytes, e: TimedEvent): void {
  attributes(out.ascii('{"attributes":'), e.attributes)
    .ascii(',"name":')
    .string(e.name)
    .ascii(',"timeUnixNano":"')
    .ascii(nanos(e.time))
    .ascii(`","droppedAttributesCount":${e.droppedAttributesCount ?? 0}}`);
}

function link(out: JsonBytes, l: Link): void {
  const context = l.context;
  attributes(out.ascii('{"attributes":'), l.attributes).ascii(',"spanId":').string(context.spanId).ascii(',"traceId":').string(context.traceId);
  const state = context.traceState?.serialize();
  if (state !== undefined) out.ascii(',"traceState":').string(state);
  out.ascii(`,"droppedAttributesCount":${l.droppedAttributesCount ?? 0},"flags":${flags(context.traceFlags, context.isRemote)}}`);
}

function list<T>(out: JsonBytes, items: readonly T[], write: (out: JsonBytes, item: T) => void): void {
  out.ascii('[');
  items.forEach((item, i) => {
    if (i > 0) out.ascii(',');
    write(out, item);
  });
  out.ascii(']');
}

const PLAIN_SPAN_MIDDLE = bytesOf(',"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,"status":{"code":0},"links":[],"droppedLinksCount":0,"flags":');

/** One span, with the fields of the library's request in its order. */
export function writeSpan(out: JsonBytes, span: ReadableSpan): void {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  out.ascii('{"traceId":').string(context.traceId).ascii(',"spanId":').string(context.spanId);
  if (parent?.spanId) out.ascii(',"parentSpanId":').string(parent.spanId);
  const state = context.traceState?.serialize();
  if (state !== undefined) out.ascii(',"traceState":').string(state);
  out
    .ascii(',"name":')
    .string(span.name)
    .ascii(`,"kind":${span.kind == null ? 0 : span.kind + 1},"startTimeUnixNano":"`)
    .ascii(nanos(span.startTime))
    .ascii('","endTimeUnixNano":"')
    .ascii(nanos(span.endTime))
    .ascii('","attributes":');
  attributes(out, span.attributes);
  const status = span.status;
  if (span.droppedAttributesCount === 0 && span.events.length === 0 && span.droppedEventsCount === 0 && status.code === 0 && status.message === undefined && span.links.length === 0 && span.droppedLinksCount === 0) {
    // Most spans: nothing dropped, no events or links, no status.
    out.raw(PLAIN_SPAN_MIDDLE).ascii(`${flags(context.traceFlags, parent?.isRemote)}}`);
    return;
  }
  out.ascii(`,"droppedAttributesCount":${span.droppedAttributesCount},"events":`);
  list(out, span.events, event);
  out.ascii(`,"droppedEventsCount":${span.droppedEventsCount},"status":{"code":${status.code}`);
  if (status.message !== undefined) out.ascii(',"message":').string(status.message);
  out.ascii('},"links":');
  list(out, span.links, link);
  out.ascii(`,"droppedLinksCount":${span.droppedLinksCount},"flags":${flags(context.traceFlags, parent?.isRemote)}}`);
}

/** Resources and scopes are few (one resource per process): each one's JSON is made once. */
const resourceTexts = new WeakMap<Resource, string>();
const scopeTexts = new WeakMap<Scope, string>();

/** A resource as the request writes it; kept once its attributes have settled (see otlp-export.ts). */
export function resourceJson(resource: Resource): string {
  let text = resourceTexts.get(resource);
  if (text !== undefined) return text;
  const out = new JsonBytes(1024);
  attributes(out.ascii('{"attributes":'), resource.attributes).ascii(',"droppedAttributesCount":0');
  if (resource.schemaUrl) out.ascii(',"schemaUrl":').string(resource.schemaUrl);
  text = out.ascii('}').written().toString('utf8');
  if (!resource.asyncAttributesPending) resourceTexts.set(resource, text);
  return text;
}

/** An instrumentation scope as the request writes it. */
export function scopeJson(scope: Scope): string {
  let text = scopeTexts.get(scope);
  if (text !== undefined) return text;
  const out = new JsonBytes(256);
  out.ascii('{"name":').string(scope.name);
  if (scope.version !== undefined) out.ascii(',"version":').string(scope.version);
  const { attributes: scopeAttributes, droppedAttributesCount } = scope as Scope & { attributes?: Attributes; droppedAttributesCount?: number };
  if (scopeAttributes && Object.keys(scopeAttributes).length > 0) attributes(out.ascii(',"attributes":'), scopeAttributes).ascii(`,"droppedAttributesCount":${droppedAttributesCount ?? 0}`);
  text = out.ascii('}').written().toString('utf8');
  scopeTexts.set(scope, text);
  return text;
}
