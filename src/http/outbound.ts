import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { OutboundPolicy } from './outbound-policy.js';

// The one HTTP client for every outbound call the gateway makes for a user-supplied URL: task targets, scheduler HTTP
// targets and the HTTP notification channels (src/channels/http.ts). Every request goes through the outbound policy's
// agents (src/http/outbound-policy.ts). node:http with keep-alive agents rather than fetch: it costs far less CPU per
// request, it keeps raw header pairs (duplicates) and every method the webhook channel allows (TRACE included).

export interface OutboundRequest {
  url: string;
  method: string;
  /** Ordered pairs (duplicates kept) or a record. */
  headers: Record<string, string> | ReadonlyArray<readonly [string, string]>;
  /** null: no body and no Content-Length. */
  body: string | Buffer | null;
}

export interface ExchangeOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Bytes of the answer kept (the rest is read and dropped). */
  bodyLimit: number;
  policy: OutboundPolicy;
}

export type Exchange =
  | { ok: true; status: number; headers: IncomingHttpHeaders; body: string }
  /** invalid: the request cannot be made (URL, scheme, header); refused: the outbound policy; the rest: transport. */
  | { ok: false; kind: 'invalid' | 'refused' | 'timeout' | 'aborted' | 'failed'; message: string };

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return `${typeof code === 'string' && !error.message.includes(code) ? `${code} ` : ''}${error.message}`;
}

/** One request and its answer; never rejects. Tracing (src/telemetry/tracing.ts) may wrap it once, at start-up. */
export let exchange: (req: OutboundRequest, options: ExchangeOptions) => Promise<Exchange> = exchangeOnce;

/** Tracing on: every outbound request runs inside `wrap` (its client span). Chosen once: off, nothing is asked per call. */
export function wrapExchange(wrap: (send: typeof exchangeOnce) => typeof exchangeOnce): void {
  exchange = wrap(exchangeOnce);
}

function exchangeOnce(req: OutboundRequest, options: ExchangeOptions): Promise<Exchange> {
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return Promise.resolve({ ok: false, kind: 'invalid', message: `invalid URL: ${req.url.slice(0, 100)}` });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve({ ok: false, kind: 'invalid', message: `unsupported URL scheme ${url.protocol}` });
  const pairs: [string, string][] = Array.isArray(req.headers) ? req.headers.map(([n, v]) => [n, v]) : Object.entries(req.headers);
  const has = (name: string) => pairs.some(([n]) => n.toLowerCase() === name);
  // Raw pairs get no Host header from node:http.
  if (!has('host')) pairs.unshift(['Host', url.host]);
  if (req.body !== null && !has('content-length')) pairs.push(['Content-Length', String(Buffer.byteLength(req.body))]);

  return new Promise((resolve) => {
    // One timer and one listener per call, both released when it ends: AbortSignal.timeout/any would keep a timer
    // and a dependent signal alive per call, which at a thousand calls a second starves the process.
    const attempt = new AbortController();
    let timedOut = false;
    let settled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      attempt.abort();
    }, options.timeoutMs);
    const onStop = () => attempt.abort();
    options.signal?.addEventListener('abort', onStop, { once: true });
    const finish = (result: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onStop);
      resolve(result);
    };
    const transportFailure = (error: unknown): Exchange => {
      if (timedOut) return { ok: false, kind: 'timeout', message: `no complete answer within ${options.timeoutMs} ms` };
      if (options.signal?.aborted) return { ok: false, kind: 'aborted', message: errorText(options.signal.reason ?? 'aborted') };
      if (OutboundPolicy.isRefusal(error)) return { ok: false, kind: 'refused', message: OutboundPolicy.describeRefusal(req.url, error as Error) };
      return { ok: false, kind: 'failed', message: errorText(error) };
    };
    if (options.signal?.aborted) attempt.abort();
    let outgoing: http.ClientRequest;
    try {
      outgoing = (url.protocol === 'https:' ? https : http).request(
        url,
        { method: req.method, headers: pairs.flat(), agent: options.policy.agentFor(url), signal: attempt.signal },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            if (size < options.bodyLimit) chunks.push(chunk);
            size += chunk.length;
          });
          res.on('end', () => finish({ ok: true, status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).subarray(0, options.bodyLimit).toString('utf8') }));
          res.on('error', (error) => finish(transportFailure(error)));
          // 'end' precedes 'close'; a close without 'end' is a truncated answer.
          res.on('close', () => finish(transportFailure(new Error('the connection closed before the answer ended'))));
        },
      );
    } catch (error) {
      // Synchronous refusals: an invalid header name or value, a bad method token.
      finish({ ok: false, kind: 'invalid', message: `invalid request: ${errorText(error)}` });
      return;
    }
    outgoing.on('error', (error) => finish(transportFailure(error)));
    outgoing.end(req.body ?? undefined);
  });
}

export type OutboundOutcome =
  | { kind: 'answered'; status: number; body: string }
  | { kind: 'timeout'; message: string }
  | { kind: 'aborted'; message: string }
  /** The outbound policy refused the address, or the request cannot be made: trying again cannot help. */
  | { kind: 'refused'; message: string }
  | { kind: 'failed'; message: string };

/**
 * A task or scheduler target: `body` null means none (methods that usually carry one still state a length of 0).
 * Keeps the first `bodyLimit` characters of the answer; never throws.
 */
export async function sendOutbound(
  req: { url: string; method: string; headers: Record<string, string>; body: string | null },
  options: { timeoutMs: number; signal: AbortSignal; bodyLimit: number; policy: OutboundPolicy },
): Promise<OutboundOutcome> {
  const bodyless = req.method === 'GET' || req.method === 'HEAD';
  const usuallyBody = req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH';
  const body = bodyless ? null : usuallyBody || req.body !== null ? (req.body ?? '') : null;
  const result = await exchange({ ...req, body }, options);
  if (result.ok) return { kind: 'answered', status: result.status, body: result.body.slice(0, options.bodyLimit) };
  switch (result.kind) {
    case 'timeout':
      return { kind: 'timeout', message: `no answer from ${req.url} within ${options.timeoutMs / 1000} s` };
    case 'aborted':
      return { kind: 'aborted', message: 'interrupted: the gateway process shut down' };
    case 'refused':
    case 'invalid':
      return { kind: 'refused', message: `request to ${req.url} not made: ${result.message}` };
    default:
      return { kind: 'failed', message: `request to ${req.url} failed: ${result.message}` };
  }
}
