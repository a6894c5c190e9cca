import type { Gateway } from '../../src/app.js';
import type { EventTopic } from '../../src/events/bus.js';
import { liveFollowers } from '../../src/events/live.js';
import { LISTENER_APPLICATION_NAME } from '../../src/db/listener.js';
import type pg from 'pg';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { eventually } from './sink.js';

// When may a test make the change a subscription should report? Neither graphql-ws nor SSE says anything before
// the first event, and the subscriptions emit no initial state unless asked (`current: true`). On the server, a
// subscription follows its key through a feed of the event bus (src/events/live.ts), and it is ready once it has
// read the state it starts from (what a resync is compared with) and waits for the next value, with nothing left for
// its feed to read. So for a gateway in this process, the test asks the feeds.

export interface SubscriptionWatch {
  /**
   * Resolves once at least `count` subscriptions to `topic`/`key`, made since this watch began, are open and waiting
   * for a value: from then on no event about the key is missed, and what they were told before (a resync) is handled.
   */
  ready(topic: EventTopic, key: string, count?: number, timeoutMs?: number): Promise<void>;
}

/** Watches the subscriptions `gateway` opens from now on: call it just before the client subscribes. */
export function watchSubscriptions(gateway: Gateway): SubscriptionWatch {
  const bus = gateway.services.bus;
  const from = Math.max(0, ...liveFollowers(bus).map((f) => f.seq));
  return {
    async ready(topic, key, count = 1, timeoutMs = 10_000) {
      const open = () => liveFollowers(bus).filter((f) => f.seq > from && f.topic === topic && f.key === key);
      try {
        await eventually(async () => open().filter((f) => f.ready).length >= count, timeoutMs, 5);
      } catch {
        const seen = open().map((f) => (f.ready ? 'ready' : 'busy'));
        throw new Error(`${count} subscription(s) to ${topic}:${key} were not ready within ${timeoutMs} ms (open: ${JSON.stringify(seen)})`);
      }
    },
  };
}

/**
 * Runs `act` (a write set up before subscribing) and resolves once the gateway's event bus has heard what it announced
 * about `topic`/`key`. Its NOTIFY reaches the bus after `act` has its answer, so without this wait it can reach a feed
 * opened later and make it read once more than the test counts.
 */
export async function announced<T>(gateway: Gateway, topic: EventTopic, key: string, act: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  let heard = false;
  const unwatch = gateway.services.bus.watch(topic, key, (signal) => {
    if (signal.kind === 'event') heard = true;
  });
  try {
    const result = await act();
    await eventually(async () => heard, timeoutMs, 5);
    return result;
  } finally {
    unwatch();
  }
}

/**
 * Commits `statements` (writes that announce nothing), then kills the gateway's LISTEN connection on `sql`'s
 * database, so that only the resync after it reconnects can tell subscribers. In this order because a listener back
 * before the commit would resync too early and never hear of the change. Returns the killed connection's pid.
 */
export async function changeUnannounced(sql: pg.Client, ...statements: (string | pg.QueryConfig)[]): Promise<number> {
  for (const statement of statements) await sql.query(statement);
  const { rows } = await sql.query<{ pid: number; killed: boolean }>(
    'SELECT pid, pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1',
    [LISTENER_APPLICATION_NAME],
  );
  if (rows.length !== 1 || !rows[0]!.killed) throw new Error(`expected to kill one LISTEN connection, killed ${JSON.stringify(rows)}`);
  return rows[0]!.pid;
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

