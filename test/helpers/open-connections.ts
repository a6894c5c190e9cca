import WebSocket from 'ws';

// Connections a client keeps open (a graphql-ws socket with operations sent over time, an SSE stream read event by
// event), for the tests of what happens to them while they live: a key revoked, a token expiring, a server gone.

export interface WsMessage {
  type: string;
  id?: string;
  payload?: any;
}

export interface OpenSocket {
  /** Every message the server sent, in order. */
  messages: WsMessage[];
  /** When the server (or the network) closed it. */
  closed: Promise<{ code: number; reason: string; at: number }>;
  isOpen(): boolean;
  /** Sends a subscribe message; resolves with the messages of that operation up to its complete or error (or the close). */
  operation(query: string, variables?: Record<string, unknown>): Promise<WsMessage[]>;
  /** Sends a subscribe message and returns at once: its messages collect in `messages`. */
  subscribe(query: string, variables?: Record<string, unknown>): string;
  close(): void;
}

/** A graphql-transport-ws socket, acknowledged (rejects with the close code when the server refuses it). */
export function openSocket(url: string, init: Record<string, unknown>): Promise<OpenSocket> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const messages: WsMessage[] = [];
  const waiting = new Set<() => void>();
  let next = 0;
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString(), at: Date.now() });
      for (const wake of [...waiting]) wake();
    }),
  );
  socket.on('error', () => undefined);
  const subscribe = (query: string, variables: Record<string, unknown> = {}) => {
    const id = String(++next);
    socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } }));
    return id;
  };
  const open: OpenSocket = {
    messages,
    closed,
    isOpen: () => socket.readyState === WebSocket.OPEN,
    subscribe,
    operation(query, variables) {
      const id = subscribe(query, variables);
      return new Promise((resolve) => {
        const check = () => {
          const mine = messages.filter((m) => m.id === id);
          if (mine.some((m) => m.type === 'complete' || m.type === 'error') || socket.readyState >= WebSocket.CLOSING) {
            waiting.delete(check);
            resolve(mine);
          }
        };
        waiting.add(check);
        check();
      });
    },
    close: () => socket.terminate(),
  };
  return new Promise((resolve, reject) => {
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: init })));
    socket.on('message', (raw) => {
      const message = JSON.parse(raw.toString()) as WsMessage;
      messages.push(message);
      if (message.type === 'connection_ack') resolve(open);
      for (const wake of [...waiting]) wake();
    });
    void closed.then(({ code, reason }) => reject(new Error(`closed ${code} ${reason}`)));
  });
}

export interface SseEvent {
  event: string;
  data: any;
  at: number;
}

export interface OpenStream {
  status: number;
  events: SseEvent[];
  /** When the server ended the stream (its body ended). */
  ended: Promise<number>;
  close(): void;
}

/** A GraphQL-over-SSE request (distinct connections mode) whose events are read as they come. */
export async function openStream(url: string, query: string, headers: Record<string, string>): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    signal: controller.signal,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query }),
  });
  const events: SseEvent[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return Date.now();
        text += decoder.decode(value, { stream: true });
        const blocks = text.split('\n\n');
        text = blocks.pop()!;
        for (const block of blocks) {
          const event = /^event: (.*)$/m.exec(block)?.[1];
          if (!event) continue;
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trimStart())
            .join('\n');
          events.push({ event, data: data ? JSON.parse(data) : null, at: Date.now() });
        }
      }
    } catch {
      return Date.now();
    }
  })();
  return { status: res.status, events, ended, close: () => controller.abort() };
}

/** Resolves when `check` holds, polling every 25 ms; rejects after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
