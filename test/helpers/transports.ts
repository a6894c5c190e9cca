import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';

// One GraphQL operation over each transport a client may use, answering what the client would see, so that a test
// can run the same table over HTTP, server-sent events and graphql-ws.

export interface TransportAnswer {
  /** HTTP status (graphql-ws: 200 when the socket was accepted). */
  status: number;
  /** Every result (`next` payload, or the single HTTP answer). */
  results: { data?: any; errors?: { message: string; extensions?: Record<string, unknown> }[] }[];
  /** graphql-ws: the close code when the server closed the socket instead of answering. */
  closeCode?: number;
  closeReason?: string;
}

export async function overHttp(url: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<TransportAnswer> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, results: [(await res.json()) as TransportAnswer['results'][number]] };
}

/** Reads `event: next` data of a GraphQL-over-SSE answer until `complete` (or `limit` results). */
export async function overSse(url: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}, limit = 1): Promise<TransportAnswer> {
  const controller = new AbortController();
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    signal: controller.signal,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const results: TransportAnswer['results'] = [];
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const text = await res.text();
    return { status: res.status, results: text ? [JSON.parse(text)] : [] };
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (results.length < limit) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      const blocks = text.split('\n\n');
      text = blocks.pop()!;
      let complete = false;
      for (const block of blocks) {
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        if (event === 'complete') complete = true;
        else if (data) results.push(JSON.parse(data));
      }
      if (complete) break;
    }
  } finally {
    controller.abort();
  }
  return { status: res.status, results };
}

/** One operation over graphql-transport-ws; `headers` go on the upgrade request, `init` in connection_init. */
export function overWs(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  options: { headers?: Record<string, string | string[]>; init?: Record<string, unknown>; limit?: number; operationName?: string } = {},
): Promise<TransportAnswer> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { headers: options.headers ?? {} });
    const results: TransportAnswer['results'] = [];
    let status = 0;
    const finish = (extra: Partial<TransportAnswer> = {}) => {
      resolve({ status, results, ...extra });
      if (socket.readyState === WebSocket.OPEN) socket.close(1000);
    };
    socket.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, results }));
    socket.on('open', () => {
      status = 200;
      socket.send(JSON.stringify({ type: 'connection_init', ...(options.init && { payload: options.init }) }));
    });
    socket.on('message', (raw) => {
      const message = JSON.parse(raw.toString()) as { type: string; payload?: unknown };
      if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query, variables, ...(options.operationName !== undefined && { operationName: options.operationName }) } }));
      else if (message.type === 'next') {
        results.push(message.payload as TransportAnswer['results'][number]);
        if (results.length >= (options.limit ?? 1)) finish();
      } else if (message.type === 'error') {
        results.push({ errors: message.payload as never });
        finish();
      } else if (message.type === 'complete') finish();
    });
    socket.on('close', (code, reason) => resolve({ status, results, closeCode: code, closeReason: reason.toString() }));
    socket.on('error', reject);
  });
}

export interface Exchange {
  method: string;
  /** The request target as written (a URL would resolve dot segments before sending). */
  path: string;
  /** An array sends the header once per value. */
  headers?: Record<string, string | string[]>;
  /** Sent with Content-Length, or in two chunks (no Content-Length) when `chunked`. */
  body?: string;
  chunked?: boolean;
}

export interface ExchangeAnswer {
  status: number;
  /** The reason phrase of the status line. */
  statusText: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on a connection of its own, through node:http, answered as its bytes say. */
export function exchange(url: string, e: Exchange): Promise<ExchangeAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...e.headers };
    if (e.body !== undefined && !e.chunked) headers['content-length'] = String(Buffer.byteLength(e.body));
    const { hostname, port } = new URL(url);
    const req = httpRequest({ hostname, port, path: e.path, method: e.method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (e.body !== undefined && e.chunked) {
      // Written in two parts so the server cannot see the end before the first.
      const half = Math.floor(e.body.length / 2);
      req.write(e.body.slice(0, half));
      setTimeout(() => req.end(e.body!.slice(half)), 20);
    } else req.end(e.body);
  });
}

/** A request with headers fetch will not send as given (Host, Origin), through node:http. */
export function rawRequest(
  url: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return import('node:http').then(
    (http) =>
      new Promise((resolve, reject) => {
        const req = http.request(`${url}${path}`, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        });
        req.on('error', reject);
        req.end(options.body);
      }),
  );
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits what a server wrote into HTTP/1.1 answers (Content-Length, chunked, or no body); the rest is left over. */
export function parseAnswers(bytes: Buffer): { answers: RawAnswer[]; rest: Buffer } {
  const answers: RawAnswer[] = [];
  let at = 0;
  for (;;) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end === -1) break;
    const [statusLine, ...lines] = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1] ?? 0);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let bodyStart = end + 4;
    let body: Buffer;
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (bytes.length < bodyStart + length) break;
      body = bytes.subarray(bodyStart, bodyStart + length);
      at = bodyStart + length;
    } else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = [];
      let complete = false;
      for (;;) {
        const lineEnd = bytes.indexOf('\r\n', bodyStart);
        if (lineEnd === -1) break;
        const size = parseInt(bytes.subarray(bodyStart, lineEnd).toString('latin1'), 16);
        if (bytes.length < lineEnd + 2 + size + 2) break;
        parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
        bodyStart = lineEnd + 2 + size + 2;
        if (size === 0) {
          complete = true;
          break;
        }
      }
      if (!complete) break;
      body = Buffer.concat(parts);
      at = bodyStart;
    } else {
      body = Buffer.alloc(0);
      at = bodyStart;
    }
    answers.push({ status, headers, body: body.toString('utf8') });
  }
  return { answers, rest: bytes.subarray(at) };
}

/**
 * Writes `data` as given on one new connection (pipelined requests, a bad Host, an absolute-form target) and reads
 * answers until `answers` of them have come (with `untilClosed`, until the server closes), or `timeoutMs` pass.
 */
export function rawExchange(
  url: string,
  data: string | Buffer | (string | Buffer)[],
  options: { answers?: number; timeoutMs?: number; untilClosed?: boolean } = {},
): Promise<{ answers: RawAnswer[]; closed: boolean; raw: string; ms: number }> {
  return import('node:net').then(
    (net) =>
      new Promise((resolve) => {
        const { hostname, port } = new URL(url);
        const started = performance.now();
        const socket = net.connect(Number(port), hostname);
        const chunks: Buffer[] = [];
        let closed = false;
        const finish = () => {
          clearTimeout(timer);
          const all = Buffer.concat(chunks);
          resolve({ answers: parseAnswers(all).answers, closed, raw: all.toString('latin1'), ms: performance.now() - started });
          socket.destroy();
        };
        const timer = setTimeout(finish, options.timeoutMs ?? 5000);
        socket.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (!options.untilClosed && parseAnswers(Buffer.concat(chunks)).answers.length >= (options.answers ?? 1)) finish();
        });
        socket.on('end', () => {
          closed = true;
          finish();
        });
        socket.on('error', () => {
          closed = true;
          finish();
        });
        for (const part of Array.isArray(data) ? data : [data]) socket.write(part);
      }),
  );
}

/** A request's bytes, as a client would write them (Content-Length from the body). */
export function httpRequestText(method: string, target: string, headers: Record<string, string>, body?: string): string {
  const all = { ...headers, ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }) };
  return `${method} ${target} HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${body ?? ''}`;
}
