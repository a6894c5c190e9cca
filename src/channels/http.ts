/**
 * The one place for the HTTP delivery rule shared by webhook, chatA, chatB, push and gaps:
 *   2xx -> delivered; 408, 429, 5xx, network errors and timeouts -> retryable
 *   (honouring Retry-After as delta-seconds or HTTP-date); any other status -> permanent.
 * Requests go through node:http(s) rather than fetch because the webhook channel must support
 * every method of spec 4.5 including TRACE, which fetch refuses. Redirects are not followed.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { describeError, permanent, retryable, delivered, snippet, type DeliveryOutcome } from './types.js';

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** Default response timeout for every HTTP channel when none is configured. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface HttpRequest {
  url: string;
  method: HttpMethod;
  /** Ordered pairs; duplicates allowed (spec NameValue[]). */
  headers?: ReadonlyArray<readonly [string, string]>;
  body?: string | Buffer;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export type HttpAttempt = { ok: true; response: HttpResponse } | { ok: false; outcome: DeliveryOutcome };

export interface HttpOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Retry-After (RFC 9110 10.2.3): delta-seconds or an HTTP-date; returns milliseconds, or undefined. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

export interface ClassifyHints {
  /** Provider-specific explanation (e.g. Telegram description, FCM errorCode). */
  reason?: string;
  /** Provider-specific delay that beats the Retry-After header (e.g. Telegram parameters.retry_after). */
  retryAfterMs?: number;
  providerMessageId?: string;
}

/** The status rule. Every HTTP channel ends here. */
export function classifyHttpResponse(response: HttpResponse, hints: ClassifyHints = {}): DeliveryOutcome {
  const { status } = response;
  const reason = `HTTP ${status}${hints.reason ? `: ${hints.reason}` : response.text ? `: ${snippet(response.text)}` : ''}`;
  if (status >= 200 && status <= 299) return delivered(`HTTP ${status}`, hints.providerMessageId);
  if (isRetryableStatus(status)) {
    return retryable(reason, hints.retryAfterMs ?? parseRetryAfter(response.headers['retry-after']));
  }
  return permanent(reason);
}

function hasHeader(headers: ReadonlyArray<readonly [string, string]>, name: string): boolean {
  const lower = name.toLowerCase();
  return headers.some(([n]) => n.toLowerCase() === lower);
}

/**
 * Performs one request. Never rejects: transport failures come back as `{ok:false, outcome}`
 * (bad URL -> permanent; network error, timeout or abort -> retryable).
 */
export function performHttp(request: HttpRequest, options: HttpOptions = {}): Promise<HttpAttempt> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve({ ok: false, outcome: permanent(`invalid URL: ${snippet(request.url, 100)}`) });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.resolve({ ok: false, outcome: permanent(`unsupported URL scheme ${url.protocol}`) });
  }
  const timeoutSignal = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeoutSignal, options.signal]) : timeoutSignal;
  const headers: Array<readonly [string, string]> = [...(request.headers ?? [])];
  // node:http adds no Host header when headers are given as raw pairs (needed to keep duplicates).
  if (!hasHeader(headers, 'host')) headers.unshift(['Host', url.host]);
  if (request.body !== undefined) {
    headers.push(['Content-Length', String(Buffer.byteLength(request.body))]);
  }
  const flatHeaders = headers.flatMap(([name, value]) => [name, value]);

  return new Promise<HttpAttempt>((resolve) => {
    let settled = false;
    const finish = (attempt: HttpAttempt): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      resolve(attempt);
    };
    const abortOutcome = (): DeliveryOutcome =>
      timeoutSignal.aborted
        ? retryable(`timeout: no complete response within ${timeoutMs} ms`)
        : retryable(`aborted: ${describeError(options.signal?.reason)}`);
    let req: http.ClientRequest | undefined;
    const onAbort = (): void => {
      finish({ ok: false, outcome: abortOutcome() });
      req?.destroy();
    };
    const transport = url.protocol === 'https:' ? https : http;
    try {
      req = transport.request(url, { method: request.method, headers: flatHeaders }, onResponse);
    } catch (error) {
      // Synchronous refusals: invalid header name/value characters, bad method token.
      finish({ ok: false, outcome: permanent(`invalid request: ${describeError(error)}`) });
      return;
    }
    function onResponse(res: http.IncomingMessage): void {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
      });
      res.on('end', () => {
        finish({
          ok: true,
          response: { status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') },
        });
      });
      res.on('error', (error) => {
        finish({ ok: false, outcome: signal.aborted ? abortOutcome() : retryable(`network error: ${describeError(error)}`) });
      });
      // 'end' precedes 'close'; a close without 'end' is a truncated answer.
      res.on('close', () => finish({ ok: false, outcome: signal.aborted ? abortOutcome() : retryable('connection closed mid-response') }));
    }
    req.on('error', (error) => {
      finish({ ok: false, outcome: signal.aborted ? abortOutcome() : retryable(`network error: ${describeError(error)}`) });
    });
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    if (request.body !== undefined) req.write(request.body);
    req.end();
  });
}

/** POST a JSON document; headers are added after Content-Type so callers may override it. */
export function postJson(
  url: string,
  payload: unknown,
  options: HttpOptions & { headers?: ReadonlyArray<readonly [string, string]> } = {},
): Promise<HttpAttempt> {
  const extra = options.headers ?? [];
  const headers: Array<readonly [string, string]> = [];
  if (!hasHeader(extra, 'content-type')) headers.push(['Content-Type', 'application/json; charset=utf-8']);
  if (!hasHeader(extra, 'accept')) headers.push(['Accept', 'application/json']);
  headers.push(...extra);
  return performHttp({ url, method: 'POST', headers, body: JSON.stringify(payload) }, options);
}

/** Parse a JSON answer without throwing. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export { hasHeader };
