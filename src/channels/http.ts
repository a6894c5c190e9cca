/**
 * The one place for the HTTP delivery rule shared by webhook, chatA, chatB, push and gaps:
 *   2xx -> delivered; 408, 429, 5xx, network errors and timeouts -> retryable
 *   (honouring Retry-After as delta-seconds or HTTP-date); any other status -> permanent.
 * Requests go through the gateway's one outbound client (node:http, so the webhook channel can use every method of
 * spec 4.5 including TRACE, which fetch refuses) and its outbound policy. Redirects are not followed.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { exchange } from '../http/outbound.js';
import type { OutboundPolicy } from '../http/outbound-policy.js';
import { permanent, retryable, delivered, snippet, type DeliveryOutcome } from './types.js';

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
  signal?: AbortSignal | undefined;
  /** Where requests may go (OUTBOUND_ALLOW); every channel request passes it. */
  outbound: OutboundPolicy;
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
 * Performs one request through the gateway's one outbound client (src/http/outbound.ts, its policy included).
 * Never rejects: a bad URL, a bad header or a refused address -> permanent; network error, timeout or abort -> retryable.
 */
export async function performHttp(request: HttpRequest, options: HttpOptions): Promise<HttpAttempt> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const result = await exchange(
    { url: request.url, method: request.method, headers: request.headers ?? [], body: request.body ?? null },
    { timeoutMs, signal: options.signal, bodyLimit: MAX_RESPONSE_BYTES, policy: options.outbound },
  );
  if (result.ok) return { ok: true, response: { status: result.status, headers: result.headers, text: result.body } };
  switch (result.kind) {
    case 'invalid':
    case 'refused':
      return { ok: false, outcome: permanent(result.message) };
    case 'timeout':
      return { ok: false, outcome: retryable(`timeout: no complete response within ${timeoutMs} ms`) };
    case 'aborted':
      return { ok: false, outcome: retryable(`aborted: ${result.message}`) };
    default:
      return { ok: false, outcome: retryable(`network error: ${result.message}`) };
  }
}

/** POST a JSON document; headers are added after Content-Type so callers may override it. */
export function postJson(
  url: string,
  payload: unknown,
  options: HttpOptions & { headers?: ReadonlyArray<readonly [string, string]> },
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
