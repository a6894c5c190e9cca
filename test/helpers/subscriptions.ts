import type { Gateway } from '../../src/app.js';
import type { EventBus, EventTopic } from '../../src/events/bus.js';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { eventually } from './sink.js';

// When may a test make the change a subscription should report? Neither graphql-ws nor SSE says anything before
// the first event, and the subscriptions emit no initial state. On the server, a subscription is registered when
// its resolver takes a signal queue from the event bus (src/events/bus.ts), and it is ready once it reads that
// queue: src/events/live.ts reads the initial state (what a resync is compared with) before its first read. So for a
// gateway in this process, the test watches the bus: each queue handed out, and whether its reader waits on it now.

interface Watched {
  topic: EventTopic;
  key: string;
  /** Its reader waits for the next signal: everything it was told so far is handled. */
  waiting: boolean;
  closed: boolean;
}

export interface SubscriptionWatch {
  /**
   * Resolves once at least `count` subscriptions to `topic`/`key`, made since this watch began, are open and waiting
   * for a signal: from then on no event about the key is missed, and what they were told before (a resync) is handled.
   */
  ready(topic: EventTopic, key: string, count?: number, timeoutMs?: number): Promise<void>;
}

const watched = new WeakMap<EventBus, Watched[]>();

/** Watches the subscriptions `gateway` registers from now on: call it just before the client subscribes. */
export function watchSubscriptions(gateway: Gateway): SubscriptionWatch {
  const bus = gateway.services.bus;
  let all = watched.get(bus);
  if (!all) {
    const list: Watched[] = [];
    all = list;
    watched.set(bus, list);
    const subscribe = bus.subscribe.bind(bus);
    bus.subscribe = (topic, key) => {
      const queue = subscribe(topic, key);
      const entry: Watched = { topic, key, waiting: false, closed: false };
      list.push(entry);
      const next = queue.next.bind(queue);
      queue.next = () => {
        entry.waiting = true;
        const read = next();
        // Runs before the reader's own continuation (registered first): `waiting` is never stale when it resumes.
        read.then(
          () => (entry.waiting = false),
          () => (entry.waiting = false),
        );
        return read;
      };
      const close = queue.return!.bind(queue);
      queue.return = (value?: unknown) => {
        entry.closed = true;
        return close(value);
      };
      return queue;
    };
  }
  const list = all;
  const from = list.length;
  return {
    async ready(topic, key, count = 1, timeoutMs = 10_000) {
      const open = () => list.slice(from).filter((s) => s.topic === topic && s.key === key && !s.closed);
      try {
        await eventually(async () => open().filter((s) => s.waiting).length >= count, timeoutMs, 5);
      } catch {
        const seen = open().map((s) => (s.waiting ? 'waiting' : 'busy'));
        throw new Error(`${count} subscription(s) to ${topic}:${key} were not ready within ${timeoutMs} ms (open: ${JSON.stringify(seen)})`);
      }
    },
  };
}

/** What a subscription received so far (an error as `{ error }`), and how to end it. */
export type Events = { events: unknown[]; close(): Promise<void> };

export function wsSubscription(url: string, query: string): Events {
  const client: Client = createClient({ url: `${url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  const events: unknown[] = [];
  client.subscribe({ query }, { next: (value) => events.push(value), error: (error) => events.push({ error }), complete: () => undefined });
  return { events, close: () => client.dispose() as Promise<void> };
}

export function sseSubscription(url: string, query: string): Events {
  const controller = new AbortController();
  const events: unknown[] = [];
  void (async () => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
      const lines = text.split('\n');
      text = lines.pop()!;
      for (const line of lines) if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
    }
  })().catch(() => undefined);
  return { events, close: async () => controller.abort() };
}

