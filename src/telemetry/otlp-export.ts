import { diag, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate, type OTLPExporterNodeConfigBase } from '@opentelemetry/otlp-exporter-base/node-http';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace';
import { JsonBytes, resourceJson, scopeJson, writeSpan } from './otlp-json.js';

// The batching span processor and OTLP/HTTP JSON exporter of the gateway's traces, in place of the SDK's
// BatchSpanProcessor and exporter-trace-otlp-http: each span is written into its batch's bytes as it ends
// (src/telemetry/otlp-json.ts) instead of being kept, object graph and all, until its batch is serialized. The same
// settings (OTEL_BSP_*: a batch is sent once it holds maxExportBatchSize spans or scheduledDelayMillis after its
// first; at most maxQueueSize spans wait, in batches being written or sent, and the rest are dropped and counted, so
// that a slow collector bounds the memory tracing holds) and the same sending: the exporter library's own HTTP
// delegate, with its OTEL_EXPORTER_OTLP_* endpoint, headers, timeout, compression, retries and bound on concurrent
// exports.

type Resource = ReadableSpan['resource'];
type Scope = ReadableSpan['instrumentationScope'];

export interface OtlpExportOptions {
  maxQueueSize?: number | undefined;
  maxExportBatchSize?: number | undefined;
  scheduledDelayMillis?: number | undefined;
  exportTimeoutMillis?: number | undefined;
  /** The exporter's configuration (url, headers, ...); unset fields come from OTEL_EXPORTER_OTLP_* as the library reads them. */
  exporter?: OTLPExporterNodeConfigBase | undefined;
}

/** The spans of one instrumentation scope in a batch, written. */
interface ScopeGroup {
  scope: Scope;
  spans: JsonBytes;
  count: number;
}

/** A batch: its spans by resource, then by scope key, in the order first met. */
type Batch = Map<Resource, Map<string, ScopeGroup>>;

/** What the export delegate is handed: the request's bytes, and how many spans they hold (its metrics count them). */
interface Request {
  body: Uint8Array;
  spans: number;
}

const scopeKeys = new WeakMap<Scope, string>();
function scopeKey(scope: Scope): string {
  let key = scopeKeys.get(scope);
  if (key === undefined) scopeKeys.set(scope, (key = `${scope.name}@${scope.version || ''}:${scope.schemaUrl || ''}`));
  return key;
}

export class OtlpJsonExportProcessor implements SpanProcessor {
  private readonly maxQueueSize: number;
  private readonly maxExportBatchSize: number;
  private readonly scheduledDelayMillis: number;
  private readonly exportTimeoutMillis: number;
  private readonly delegate;
  private batch: Batch = new Map();
  /** Spans in `batch`. */
  private queued = 0;
  /** Spans in batches handed to the delegate and not yet answered. */
  private inFlight = 0;
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly sending = new Set<Promise<void>>();
  /**
   * Byte buffers of batches already copied into their request, written again by the next ones: a batch's buffers
   * would otherwise be memory outside the heap allocated anew every few hundred requests.
   */
  private readonly spare: JsonBytes[] = [];
  private stopped = false;

  constructor(options: OtlpExportOptions = {}) {
    this.maxQueueSize = options.maxQueueSize ?? 2048;
    this.maxExportBatchSize = Math.min(options.maxExportBatchSize ?? 512, this.maxQueueSize);
    this.scheduledDelayMillis = options.scheduledDelayMillis ?? 5000;
    this.exportTimeoutMillis = options.exportTimeoutMillis ?? 30_000;
    this.delegate = createOtlpHttpExportDelegate<Request, unknown>(
      convertLegacyHttpOptions(options.exporter ?? {}, 'TRACES', 'v1/traces', { 'Content-Type': 'application/json' }),
      { serializeRequest: (request) => request.body, deserializeResponse: (bytes) => (bytes.length ? JSON.parse(Buffer.from(bytes).toString('utf8')) : {}) },
      'otlp_http_span_exporter',
      { name: 'span', countItems: (request) => request.spans },
      undefined,
    );
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queued + this.inFlight >= this.maxQueueSize) {
      if (this.dropped++ === 0) diag.debug('maxQueueSize reached, dropping spans');
      return;
    }
    if (this.dropped > 0) {
      diag.warn(`Dropped ${this.dropped} spans because maxQueueSize reached`);
      this.dropped = 0;
    }
    let scopes = this.batch.get(span.resource);
    if (scopes === undefined) this.batch.set(span.resource, (scopes = new Map()));
    const key = scopeKey(span.instrumentationScope);
    let group = scopes.get(key);
    if (group === undefined) scopes.set(key, (group = { scope: span.instrumentationScope, spans: this.spare.pop() ?? new JsonBytes(), count: 0 }));
    const before = group.spans.length;
    try {
      if (group.count > 0) group.spans.ascii(',');
      writeSpan(group.spans, span);
    } catch (error) {
      // A span that cannot be written is lost alone: the batch stays well-formed, and span.end() never throws.
      group.spans.truncate(before);
      if (group.count === 0) {
        // Nor does it leave its scope (or resource) in the batch with no span under it.
        scopes.delete(key);
        if (scopes.size === 0) this.batch.delete(span.resource);
        if (this.spare.length < 8) this.spare.push(group.spans);
      }
      diag.error('OtlpJsonExportProcessor: a span could not be written', error);
      return;
    }
    group.count++;
    this.queued++;
    if (this.queued >= this.maxExportBatchSize) this.send();
    else this.timer ??= setTimeout(() => this.send(), this.scheduledDelayMillis).unref();
  }

  forceFlush(): Promise<void> {
    if (this.queued > 0) this.send();
    return Promise.all([...this.sending]).then(() => this.delegate.forceFlush());
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.forceFlush();
    await this.delegate.shutdown();
  }

  /** Hands the batch to the delegate; a new one starts at once. */
  private send(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.batch;
    const spans = this.queued;
    this.batch = new Map();
    this.queued = 0;
    if (spans === 0) return;
    this.inFlight += spans;
    // Never a rejection: nothing awaits a batch sent on its own (a failure is the diagnostic log's, as the SDK's).
    const sent = this.export(batch, spans)
      .catch((error: unknown) => diag.error('OtlpJsonExportProcessor: span export failed', error))
      .finally(() => {
        this.inFlight -= spans;
        this.sending.delete(sent);
      });
    this.sending.add(sent);
  }

  private async export(batch: Batch, spans: number): Promise<void> {
    const parts: Uint8Array[] = [Buffer.from('{"resourceSpans":[')];
    let firstResource = true;
    for (const [resource, scopes] of batch) {
      // Resource detectors may still be settling: the request carries what they found.
      if (resource.asyncAttributesPending) await resource.waitForAsyncAttributes?.();
      parts.push(Buffer.from(`${firstResource ? '' : ','}{"resource":${resourceJson(resource)},"scopeSpans":[`));
      firstResource = false;
      let firstScope = true;
      for (const group of scopes.values()) {
        parts.push(Buffer.from(`${firstScope ? '' : ','}{"scope":${scopeJson(group.scope)},"spans":[`), group.spans.written());
        firstScope = false;
        const schemaUrl = group.scope.schemaUrl;
        parts.push(Buffer.from(schemaUrl === undefined ? ']}' : `],"schemaUrl":${JSON.stringify(schemaUrl)}}`));
      }
      parts.push(Buffer.from(resource.schemaUrl ? `],"schemaUrl":${JSON.stringify(resource.schemaUrl)}}` : ']}'));
    }
    parts.push(Buffer.from(']}'));
    const body = Buffer.concat(parts);
    for (const scopes of batch.values()) {
      for (const group of scopes.values()) {
        group.spans.reset();
        if (this.spare.length < 8) this.spare.push(group.spans);
      }
    }
    const result = await this.exported({ body, spans });
    if (result.code !== ExportResultCode.SUCCESS) diag.error('OtlpJsonExportProcessor: span export failed', result.error);
  }

  private exported(request: Request): Promise<ExportResult> {
    return new Promise((resolve) => {
      const timeout = setTimeout(() => resolve({ code: ExportResultCode.FAILED, error: new Error('Timeout') }), this.exportTimeoutMillis).unref();
      this.delegate.export(request, (result) => {
        clearTimeout(timeout);
        resolve(result);
      });
    });
  }
}
