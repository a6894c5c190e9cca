import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAudits } from 'graphql-http';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { watchSubscriptions } from './helpers/subscriptions.js';

// GraphQL over HTTP (graphql-http's audits), the graphql-transport-ws protocol, and server-sent events.

let t: TestGateway;
beforeAll(async () => {
  t = await startTestGateway('pglite', { GRAPHQL_WS_INIT_TIMEOUT_MS: '300' });
  await rpc(t.url, 'createQueue', { name: 'live' });
});
afterAll(() => t?.close());

describe('GraphQL over HTTP', () => {
  it('passes every graphql-http audit with no error and no warning', async () => {
    const results = await Promise.all(serverAudits({ url: `${t.url}/graphql` }).map((audit) => audit.fn()));
    const bad = results.filter((r) => r.status !== 'ok').map((r) => `${r.status}: ${r.name}: ${r.reason}`);
    expect(results.length).toBeGreaterThanOrEqual(61);
    expect(bad).toEqual([]);
  });

  it('serves GraphiQL to a browser', async () => {
    const res = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('GraphiQL');
  });
});

/** A raw graphql-transport-ws socket that records what the server sends and how it closes. */
function socket(url: string) {
  const ws = new WebSocket(url.replace('http', 'ws') + '/graphql', 'graphql-transport-ws');
  const messages: any[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data) => {
    messages.push(JSON.parse(String(data)));
    waiters.splice(0).forEach((w) => w());
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  const opened = new Promise<void>((resolve) => ws.on('open', () => resolve()));
  return {
    ws,
    opened,
    closed,
    send: (m: unknown) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    async next(type: string): Promise<any> {
      for (;;) {
        const found = messages.findIndex((m) => m.type === type);
        if (found >= 0) return messages.splice(found, 1)[0];
        await new Promise<void>((r) => waiters.push(r));
      }
    },
  };
}

describe('graphql-transport-ws', () => {
  it('acknowledges init, answers ping with pong, streams a subscription and completes it', async () => {
    const s = socket(t.url);
    await s.opened;
    s.send({ type: 'connection_init' });
    await s.next('connection_ack');
    s.send({ type: 'ping' });
    await s.next('pong');
    const subscriptions = watchSubscriptions(t.gateway);
    s.send({ id: '1', type: 'subscribe', payload: { query: 'subscription { queueChanged(name: "live") { name rate } }' } });
    await subscriptions.ready('queue', 'live');
    await rpc(t.url, 'changeQueueRate', { name: 'live', rate: 5 });
    const next = await s.next('next');
    expect(next).toEqual({ id: '1', type: 'next', payload: { data: { queueChanged: { name: 'live', rate: 5 } } } });
    s.send({ id: '1', type: 'complete' });
    s.send({ id: '2', type: 'subscribe', payload: { query: '{ queue(name: "live") { name } }' } });
    expect(await s.next('next')).toMatchObject({ id: '2', payload: { data: { queue: { name: 'live' } } } });
    expect(await s.next('complete')).toEqual({ id: '2', type: 'complete' });
    s.ws.close(1000);
    expect((await s.closed).code).toBe(1000);
  });

  it('closes 4401 on subscribe before the ack', async () => {
    const s = socket(t.url);
    await s.opened;
    s.send({ id: '1', type: 'subscribe', payload: { query: '{ __typename }' } });
    expect((await s.closed).code).toBe(4401);
  });

  it('closes 4400 on a malformed message', async () => {
    const s = socket(t.url);
    await s.opened;
    s.send('{"type": "nonsense"}');
    expect((await s.closed).code).toBe(4400);
  });

  it('closes 4408 when init never comes', async () => {
    const s = socket(t.url);
    await s.opened;
    expect((await s.closed).code).toBe(4408);
  });

  it('closes 4409 on a second subscriber with the same id', async () => {
    const s = socket(t.url);
    await s.opened;
    s.send({ type: 'connection_init' });
    await s.next('connection_ack');
    const sub = { id: 'dup', type: 'subscribe', payload: { query: 'subscription { queueChanged(name: "live") { name } }' } };
    s.send(sub);
    s.send(sub);
    expect((await s.closed).code).toBe(4409);
  });

  it('closes 4429 on a second init', async () => {
    const s = socket(t.url);
    await s.opened;
    s.send({ type: 'connection_init' });
    s.send({ type: 'connection_init' });
    expect((await s.closed).code).toBe(4429);
  });

  it('reports validation errors of a subscription as an error message', async () => {
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    const errors = await new Promise<unknown>((resolve) => {
      client.subscribe({ query: 'subscription { noSuchField }' }, { next: () => undefined, error: resolve, complete: () => resolve(null) });
    });
    expect(JSON.stringify(errors)).toContain('noSuchField');
    await client.dispose();
  });
});

describe('server-sent events', () => {
  it('streams a subscription as text/event-stream', async () => {
    const subscriptions = watchSubscriptions(t.gateway);
    const controller = new AbortController();
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { queueChanged(name: "live") { name paused } }' }),
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    await subscriptions.ready('queue', 'live');
    await rpc(t.url, 'pauseQueue', { name: 'live' });
    let text = '';
    while (!text.includes('"paused":true')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    expect(text).toContain('event: next');
    expect(text).toContain('{"data":{"queueChanged":{"name":"live","paused":true}}}');
  });
});
