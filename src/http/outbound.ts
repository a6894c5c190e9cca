import http from 'node:http';
import https from 'node:https';

// One outbound HTTP call for the areas whose work is an HTTP request (scheduler HTTP targets, task targets).
// node:http with keep-alive agents rather than fetch: it costs far less CPU per request, and at a thousand calls a
// second that is what bounds lateness and throughput.

export interface OutboundRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** null: no body. Methods that usually carry one always state their length (0 when empty). */
  body: string | null;
}

export type OutboundOutcome =
  | { kind: 'answered'; status: number; body: string }
  | { kind: 'timeout'; message: string }
  | { kind: 'aborted'; message: string }
  | { kind: 'failed'; message: string };

const AGENT_OPTIONS = { keepAlive: true, maxSockets: 256, maxFreeSockets: 256, scheduling: 'lifo' as const };
const httpAgent = new http.Agent(AGENT_OPTIONS);
const httpsAgent = new https.Agent(AGENT_OPTIONS);

function request(req: OutboundRequest, signal: AbortSignal, bodyLimit: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url);
    const secure = url.protocol === 'https:';
    const bodyless = req.method === 'GET' || req.method === 'HEAD';
    const usuallyBody = req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH';
    const body = bodyless ? null : usuallyBody || req.body !== null ? Buffer.from(req.body ?? '') : null;
    const outgoing = (secure ? https : http).request(
      url,
      {
        method: req.method,
        agent: secure ? httpsAgent : httpAgent,
        headers: { ...req.headers, ...(body && { 'content-length': String(body.length) }) },
        signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < bodyLimit) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, bodyLimit) }));
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new Error('the connection closed before the response ended'));
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body ?? undefined);
  });
}

/** Sends `req`, gives up after `timeoutMs` or when `signal` aborts; never throws. Keeps the first `bodyLimit` characters. */
export async function sendOutbound(req: OutboundRequest, options: { timeoutMs: number; signal: AbortSignal; bodyLimit: number }): Promise<OutboundOutcome> {
  // One timer and one listener per call, both released when it ends: AbortSignal.timeout/any would keep a timer and
  // a dependent signal alive per call, which at a thousand calls a second starves the process.
  const attempt = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attempt.abort();
  }, options.timeoutMs);
  const onStop = () => attempt.abort();
  options.signal.addEventListener('abort', onStop, { once: true });
  try {
    const res = await request(req, attempt.signal, options.bodyLimit);
    return { kind: 'answered', ...res };
  } catch (error) {
    if (timedOut) return { kind: 'timeout', message: `no answer from ${req.url} within ${options.timeoutMs / 1000} s` };
    if (options.signal.aborted) return { kind: 'aborted', message: 'interrupted: the gateway process shut down' };
    return { kind: 'failed', message: `request to ${req.url} failed: ${(error as Error).message}` };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onStop);
  }
}
