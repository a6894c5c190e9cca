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
  options: { headers?: Record<string, string>; init?: Record<string, unknown>; limit?: number } = {},
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
      if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query, variables } }));
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
