import type { Attributes, AttributeValue, HrTime, Link } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, TimedEvent } from '@opentelemetry/sdk-trace';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, TraceExporterMetricsHelper, type ISerializer, type IExportTraceServiceResponse } from '@opentelemetry/otlp-transformer';

// The OTLP/HTTP JSON encoding of a batch of spans, written straight into one string. The SDK's own serializer
// (JsonTraceSerializer) first builds the whole request as objects (every attribute a {key, value: {stringValue}}
// pair, every timestamp through BigInt), then stringifies and encodes it: with every span exported, that was the
// largest single cost of tracing a small request (docs/performance.md). This one writes the same JSON
// (test/otlp-json.test.ts compares the two on spans of every shape) with each attribute key's prefix made once. The
// exporter around it is the SDK's OTLP/HTTP one (endpoint, headers, timeout, compression, retries: the OTEL_* variables).

type AnyValue = AttributeValue | Uint8Array | null | undefined | { [key: string]: AnyValue } | readonly AnyValue[];

const quote = JSON.stringify;
const SPAN_FLAGS_HAS_IS_REMOTE = 0x100;
const SPAN_FLAGS_IS_REMOTE = 0x200;

/** `{"key":"http.route","value":` for each attribute key met (a process meets few; bounded all the same). */
const keyPrefixes = new Map<string, string>();
const MAX_KEY_PREFIXES = 1024;

function keyPrefix(key: string): string {
  let prefix = keyPrefixes.get(key);
  if (prefix === undefined) {
    prefix = `{"key":${quote(key)},"value":`;
    if (keyPrefixes.size < MAX_KEY_PREFIXES) keyPrefixes.set(key, prefix);
  }
  return prefix;
}

/** Nanoseconds since the epoch as a decimal string (what OTLP JSON carries for a fixed64). */
function nanos(time: HrTime): string {
  const seconds = Math.trunc(time[0]);
  const rest = String(Math.trunc(time[1]));
  return seconds === 0 ? rest : `${seconds}${rest.padStart(9, '0')}`;
}

function anyValue(value: AnyValue): string {
  switch (typeof value) {
    case 'string':
      return `{"stringValue":${quote(value)}}`;
    case 'number':
      return Number.isInteger(value) ? `{"intValue":${quote(value)}}` : `{"doubleValue":${quote(value)}}`;
    case 'boolean':
      return `{"boolValue":${value}}`;
    case 'object':
      if (value === null) return '{}';
      if (value instanceof Uint8Array) return `{"bytesValue":${quote(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'))}}`;
      if (Array.isArray(value)) return `{"arrayValue":{"values":[${(value as readonly AnyValue[]).map(anyValue).join(',')}]}}`;
      return `{"kvlistValue":{"values":[${keyValues(value as { [key: string]: AnyValue })}]}}`;
    default:
      return '{}';
  }
}

function keyValues(attributes: { [key: string]: AnyValue }): string {
  let out = '';
  for (const key of Object.keys(attributes)) out += `${out === '' ? '' : ','}${keyPrefix(key)}${anyValue(attributes[key])}}`;
  return out;
}

const attributeList = (attributes: Attributes | undefined) => (attributes ? `[${keyValues(attributes as { [key: string]: AnyValue })}]` : '[]');

const flags = (traceFlags: number, isRemote: boolean | undefined) => (traceFlags & 0xff) | SPAN_FLAGS_HAS_IS_REMOTE | (isRemote ? SPAN_FLAGS_IS_REMOTE : 0);

function event(e: TimedEvent): string {
  return `{"attributes":${attributeList(e.attributes)},"name":${quote(e.name)},"timeUnixNano":"${nanos(e.time)}","droppedAttributesCount":${e.droppedAttributesCount ?? 0}}`;
}

function link(l: Link): string {
  const traceState = l.context.traceState?.serialize();
  return (
    `{"attributes":${attributeList(l.attributes)},"spanId":${quote(l.context.spanId)},"traceId":${quote(l.context.traceId)}` +
    `${traceState === undefined ? '' : `,"traceState":${quote(traceState)}`},"droppedAttributesCount":${l.droppedAttributesCount ?? 0},"flags":${flags(l.context.traceFlags, l.context.isRemote)}}`
  );
}

function span(s: ReadableSpan): string {
  const context = s.spanContext();
  const parent = s.parentSpanContext;
  const traceState = context.traceState?.serialize();
  const { status } = s;
  return (
    `{"traceId":${quote(context.traceId)},"spanId":${quote(context.spanId)}` +
    `${parent?.spanId ? `,"parentSpanId":${quote(parent.spanId)}` : ''}${traceState === undefined ? '' : `,"traceState":${quote(traceState)}`}` +
    `,"name":${quote(s.name)},"kind":${s.kind + 1},"startTimeUnixNano":"${nanos(s.startTime)}","endTimeUnixNano":"${nanos(s.endTime)}"` +
    `,"attributes":${attributeList(s.attributes)},"droppedAttributesCount":${s.droppedAttributesCount}` +
    `,"events":[${s.events.map(event).join(',')}],"droppedEventsCount":${s.droppedEventsCount}` +
    `,"status":{"code":${status.code}${status.message === undefined ? '' : `,"message":${quote(status.message)}`}}` +
    `,"links":[${s.links.map(link).join(',')}],"droppedLinksCount":${s.droppedLinksCount},"flags":${flags(context.traceFlags, parent?.isRemote)}}`
  );
}

/** An ExportTraceServiceRequest: spans grouped by resource, then by instrumentation scope, in the order met. */
export function encodeSpans(spans: readonly ReadableSpan[]): string {
  const resources = new Map<ReadableSpan['resource'], Map<string, ReadableSpan[]>>();
  for (const s of spans) {
    let scopes = resources.get(s.resource);
    if (!scopes) resources.set(s.resource, (scopes = new Map()));
    const scope = s.instrumentationScope;
    const key = `${scope.name}@${scope.version || ''}:${scope.schemaUrl || ''}`;
    const list = scopes.get(key);
    if (list) list.push(s);
    else scopes.set(key, [s]);
  }
  const out: string[] = [];
  for (const [resource, scopes] of resources) {
    const scopeSpans: string[] = [];
    for (const list of scopes.values()) {
      const scope = list[0]!.instrumentationScope;
      const scopeAttributes = (scope as { attributes?: Attributes; droppedAttributesCount?: number }).attributes;
      const scopeText =
        `{"name":${quote(scope.name)}${scope.version === undefined ? '' : `,"version":${quote(scope.version)}`}` +
        (scopeAttributes && Object.keys(scopeAttributes).length > 0
          ? `,"attributes":${attributeList(scopeAttributes)},"droppedAttributesCount":${(scope as { droppedAttributesCount?: number }).droppedAttributesCount ?? 0}`
          : '') +
        '}';
      let body = '';
      for (const s of list) body += (body === '' ? '' : ',') + span(s);
      scopeSpans.push(`{"scope":${scopeText},"spans":[${body}]${scope.schemaUrl === undefined ? '' : `,"schemaUrl":${quote(scope.schemaUrl)}`}}`);
    }
    const schemaUrl = resource.schemaUrl ? `,"schemaUrl":${quote(resource.schemaUrl)}` : '';
    out.push(`{"resource":{"attributes":${attributeList(resource.attributes)},"droppedAttributesCount":0${schemaUrl}},"scopeSpans":[${scopeSpans.join(',')}]${schemaUrl}}`);
  }
  return `{"resourceSpans":[${out.join(',')}]}`;
}

/** The exporter's serializer: the request as above; the collector's answer read as the SDK reads it. */
export const fastJsonTraceSerializer: ISerializer<ReadableSpan[], IExportTraceServiceResponse> = {
  serializeRequest: (spans) => Buffer.from(encodeSpans(spans)),
  deserializeResponse: (data) => JsonTraceSerializer.deserializeResponse(data),
};

/** OTLPTraceExporter of @opentelemetry/exporter-trace-otlp-http as it builds itself, with the serializer above. */
export function otlpJsonTraceExporter(): SpanExporter {
  const options = convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/json' });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(options, fastJsonTraceSerializer, 'otlp_http_span_exporter', TraceExporterMetricsHelper, undefined));
}
