import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import WebSocket from 'ws';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';
import { createApiKey } from '../src/access/api-keys.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { gql, NO_WORKERS } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { watchSubscriptions } from './helpers/subscriptions.js';
import { httpRequestText } from './helpers/transports.js';

// The bounds of open subscriptions (src/events/subscription-registry.ts) on a real gateway, over real graphql-ws and
// SSE clients: a client that stops reading is dropped and the others keep receiving; an API key holds at most
// MAX_SUBSCRIPTIONS_PER_KEY open subscriptions on both transports together; each subscription logs one line when it
// starts and one when it ends, and /metrics shows the open ones per transport.

const MAX_PER_KEY = 3;
const MAX_BUFFERED = 64 * 1024;

type LogLine = Record<string, unknown> & { msg: string };

let db: FreshDatabase;
let gateway: Gateway;
let url: string;
const lines: LogLine[] = [];
let admin: Record<string, string>;
/** Keys of their own for each test, so that no test sees another's subscriptions. */
const keyOf = async (name: string) => {
  const { key, apiKey } = await createApiKey(gateway.services.db, { name, scopes: ['queues:read'] });
  return { key, id: apiKey.id };
};

beforeAll(async () => {
  db = await freshDatabase('pglite');
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    AUTH: 'on',
    MAX_SUBSCRIPTIONS_PER_KEY: String(MAX_PER_KEY),
    SUBSCRIPTION_MAX_BUFFERED_BYTES: String(MAX_BUFFERED),
    GRAPHQL_MAX_ALIASES: '1000',
    RATE_LIMIT_PER_MINUTE: '0',
    ...NO_WORKERS,
    ...db.env,
  });
  gateway = await startGateway(config, { log: pino({ level: 'info' }, sink) });
  url = gateway.url;
  const { key } = await createApiKey(gateway.services.db, { name: 'admin', scopes: ['admin:all'] });
  admin = { authorization: `Bearer ${key}` };
});
afterAll(async () => {
  await gateway?.close();
  await db?.drop();
});

async function createQueue(name: string, description = '') {
  const created = await gql(url, 'mutation($name: String!, $d: String!) { createQueue(input: { name: $name, description: $d }) { name } }', { name, d: description }, admin);
  expect(created.errors).toBeUndefined();
}

async function setRate(queue: string, rate: number) {
  const changed = await gql(url, 'mutation($name: String!, $rate: Int!) { changeQueueRate(name: $name, rate: $rate) { rate } }', { name: queue, rate }, admin);
  expect(changed.errors).toBeUndefined();
}

/** A graphql-transport-ws connection opened with `key`, its messages by subscription id. */
async function wsClient(key: string) {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const messages: { id?: string; type: string; payload?: any }[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  socket.on('message', (raw) => messages.push(JSON.parse(raw.toString())));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
  await eventually(async () => messages.some((m) => m.type === 'connection_ack'), 5000, 5);
  let ids = 0;
  return {
    socket,
    messages,
    closed,
    subscribe(query: string, operationName?: string) {
      const id = String(++ids);
      socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, ...(operationName && { operationName }) } }));
      return id;
    },
    complete: (id: string) => socket.send(JSON.stringify({ id, type: 'complete' })),
    of: (id: string) => messages.filter((m) => m.id === id),
    close: () => socket.close(1000),
  };
}

/** An SSE subscription read as it comes: its `next` payloads, whether it completed or the connection closed. */
function sseClient(key: string, query: string, operationName?: string) {
  const controller = new AbortController();
  const results: any[] = [];
  const state = { status: 0, completed: false, ended: false };
  const done = (async () => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, ...(operationName && { operationName }) }),
    });
    state.status = res.status;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) break;
      text += decoder.decode(value, { stream: true });
      const blocks = text.split('\n\n');
      text = blocks.pop()!;
      for (const block of blocks) {
        if (/^event: complete$/m.test(block)) state.completed = true;
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (data) results.push(JSON.parse(data));
      }
    }
  })()
    .catch(() => undefined)
    .finally(() => (state.ended = true));
  return { results, state, done, close: () => controller.abort() };
}

/** An SSE subscription on a raw socket that sends its request and never reads a byte of the answer. */
function stalledSse(key: string, query: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ query });
  const request = httpRequestText('POST', '/graphql', { host: `${hostname}:${port}`, 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` }, body);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.pause();
      socket.write(request);
      resolve(socket);
    });
  });
}

const openGauge = async () => {
  const text = await (await fetch(`${url}/metrics`, { headers: admin })).text();
  const read = (transport: string) => Number(new RegExp(`^gateway_subscriptions_open\\{transport="${transport}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { ws: read('graphql-ws'), sse: read('sse') };
};

const linesOf = (keyId: string, msg: string) => lines.filter((l) => l.keyId === keyId && l.msg === msg);

describe('open subscriptions', () => {
  it('a client that stops reading is dropped (graphql-ws: 1013 after what it had not read; SSE: the connection is cut); the others keep receiving', async () => {
    // A fat selection (about 1 MB per event), so that what the kernel buffers (some MB on loopback) fills within a
    // few dozen changes, sent at most one per STATE_WINDOW_MS.
    await createQueue('fat', 'd'.repeat(1000));
    const fat = `subscription { queueChanged(name: "fat") { rate ${Array.from({ length: 1000 }, (_, i) => `d${i}: description`).join(' ')} } }`;
    const slow = await keyOf('slow');
    const slowSse = await keyOf('slow-sse');
    const reader = await keyOf('reader');
    const watch = watchSubscriptions(gateway);
    const stalled = await wsClient(slow.key);
    stalled.subscribe(fat);
    const stalledHttp = await stalledSse(slowSse.key, fat);
    const reading = await wsClient(reader.key);
    const readingId = reading.subscribe('subscription { queueChanged(name: "fat") { rate } }');
    const readingSse = sseClient(reader.key, 'subscription { queueChanged(name: "fat") { rate } }');
    await watch.ready('queue', 'fat', 4);
    stalled.socket.pause();

    let rate = 1;
    const dropped = (keyId: string) => linesOf(keyId, 'subscription ended').some((l) => l.reason === 'too_slow');
    const rates = (results: any[]) => results.map((r) => r.data?.queueChanged?.rate ?? r);
    // Each change waits until the readers have the one before: changes closer than a window would be coalesced.
    const readersHave = (r: number) =>
      eventually(async () => reading.of(readingId).at(-1)?.payload?.data?.queueChanged?.rate === r && readingSse.results.at(-1)?.data?.queueChanged?.rate === r, 10_000, 5);
    while (!(dropped(slow.id) && dropped(slowSse.id))) {
      expect(rate, 'changes made before both stalled clients were dropped').toBeLessThan(200);
      await setRate('fat', ++rate);
      await readersHave(rate);
    }
    await setRate('fat', ++rate);
    const last = rate;
    // The readers got every change (in order, none missing; the two stalled ones took nothing from them).
    await readersHave(last);
    const expected = Array.from({ length: last - 1 }, (_, i) => i + 2);
    expect(rates(reading.of(readingId).map((m) => m.payload))).toEqual(expected);
    expect(rates(readingSse.results)).toEqual(expected);
    expect(await openGauge()).toEqual({ ws: 1, sse: 1 });
    expect(gateway.services.subscriptions.openCount(slow.id)).toBe(0);
    expect(gateway.services.subscriptions.openCount(slowSse.id)).toBe(0);

    // The stalled WebSocket, reading again, gets what was sent before it was dropped, then the close frame.
    stalled.socket.resume();
    const close = await stalled.closed;
    expect(close.code).toBe(1013);
    expect(close.reason).toMatch(/too slow/);
    expect(stalled.messages.filter((m) => m.type === 'next').length).toBeGreaterThan(0);
    // The stalled SSE connection was cut: reading again, it meets the end of the stream.
    const ended = new Promise<void>((resolve) => {
      stalledHttp.on('close', () => resolve());
      stalledHttp.on('error', () => resolve());
    });
    stalledHttp.on('data', () => undefined);
    stalledHttp.resume();
    await ended;
    reading.close();
    readingSse.close();
  });

  it(`an API key holds at most MAX_SUBSCRIPTIONS_PER_KEY (${MAX_PER_KEY}) over graphql-ws and SSE together; one more is refused until one ends`, async () => {
    await createQueue('capped');
    const query = 'subscription { queueChanged(name: "capped") { rate } }';
    const holder = await keyOf('holder');
    const other = await keyOf('other');
    const watch = watchSubscriptions(gateway);
    const ws = await wsClient(holder.key);
    const first = ws.subscribe(query);
    const second = ws.subscribe(query);
    const sse = sseClient(holder.key, query);
    await watch.ready('queue', 'capped', 3);
    expect(gateway.services.subscriptions.openCount(holder.id)).toBe(MAX_PER_KEY);

    // One more over graphql-ws: refused for that id, with a stable code; the socket and its others stay open.
    const refusedId = ws.subscribe(query);
    await eventually(async () => ws.of(refusedId).some((m) => m.type === 'complete'), 5000, 10);
    const refusal = ws.of(refusedId).find((m) => m.type === 'next')!.payload.errors[0];
    expect(refusal.extensions).toEqual({ code: 'TOO_MANY_SUBSCRIPTIONS', maxSubscriptions: MAX_PER_KEY });
    expect(refusal.message).toMatch(/MAX_SUBSCRIPTIONS_PER_KEY/);
    // One more over SSE: HTTP 200 and the error in the stream, then complete (the SSE rule of every refusal).
    const refusedSse = sseClient(holder.key, query);
    await refusedSse.done;
    expect(refusedSse.state).toMatchObject({ status: 200, completed: true });
    expect(refusedSse.results).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', maxSubscriptions: MAX_PER_KEY } })] }]);
    // Another key is not held back.
    const otherSse = sseClient(other.key, query);
    await watch.ready('queue', 'capped', 4);
    await setRate('capped', 5);
    await eventually(async () => ws.of(first).length === 1 && ws.of(second).length === 1 && sse.results.length === 1 && otherSse.results.length === 1, 5000, 10);

    // A slot freed over graphql-ws (complete) is taken over SSE, and one freed over SSE (the client went away) over graphql-ws.
    ws.complete(first);
    await eventually(async () => gateway.services.subscriptions.openCount(holder.id) === MAX_PER_KEY - 1, 5000, 10);
    const again = sseClient(holder.key, query);
    sse.close();
    await eventually(async () => gateway.services.subscriptions.openCount(holder.id) === MAX_PER_KEY - 1 && sse.state.ended, 5000, 10);
    const third = ws.subscribe(query);
    await eventually(async () => gateway.services.subscriptions.openCount(holder.id) === MAX_PER_KEY, 5000, 10);
    await watch.ready('queue', 'capped', 4);
    await setRate('capped', 6);
    await eventually(async () => again.results.length === 1 && ws.of(third).length === 1, 5000, 10);
    expect(again.results[0]).toEqual({ data: { queueChanged: { rate: 6 } } });
    expect(ws.of(third)[0]!.payload).toEqual({ data: { queueChanged: { rate: 6 } } });
    ws.close();
    again.close();
    otherSse.close();
    await eventually(async () => gateway.services.subscriptions.openCount(holder.id) === 0, 5000, 10);
  });

  it('one access line when a subscription starts and one when it ends (duration, events, transport, operation, key, request id); open ones per transport on /metrics', async () => {
    await createQueue('logged');
    const query = 'subscription Watch { queueChanged(name: "logged") { rate } }';
    const watcher = await keyOf('watcher');
    const before = await openGauge();
    const watch = watchSubscriptions(gateway);
    const ws = await wsClient(watcher.key);
    const id = ws.subscribe(query, 'Watch');
    const sse = sseClient(watcher.key, query, 'Watch');
    await watch.ready('queue', 'logged', 2);
    expect(await openGauge()).toEqual({ ws: before.ws + 1, sse: before.sse + 1 });
    const started = linesOf(watcher.id, 'subscription started');
    expect(started.map((l) => l.transport).sort()).toEqual(['graphql-ws', 'sse']);
    for (const line of started) {
      expect(line).toMatchObject({ operationName: 'Watch', fields: ['queueChanged'], keyId: watcher.id, requestId: expect.any(String) });
    }
    expect(new Set(started.map((l) => l.requestId)).size).toBe(2);

    await setRate('logged', 2);
    await setRate('logged', 3);
    await eventually(async () => ws.of(id).length === 2 && sse.results.length === 2, 5000, 10);
    ws.complete(id);
    sse.close();
    await eventually(async () => linesOf(watcher.id, 'subscription ended').length === 2, 5000, 10);
    for (const transport of ['graphql-ws', 'sse']) {
      const start = started.find((l) => l.transport === transport)!;
      const end = linesOf(watcher.id, 'subscription ended').find((l) => l.transport === transport)!;
      expect(end).toMatchObject({ requestId: start.requestId, operationName: 'Watch', keyId: watcher.id, events: 2, reason: 'closed', ms: expect.any(Number) });
      expect(end.ms as number).toBeGreaterThan(0);
    }
    expect(await openGauge()).toEqual(before);

    // One the server ends: a task already CANCELLED is sent at once, then the subscription completes.
    const task = await gql(url, 'mutation { createTask(input: { queueName: "logged", name: "done", target: { url: "https://example.invalid/" } }) { name } }', {}, admin);
    expect(task.errors).toBeUndefined();
    expect((await gql(url, 'mutation { cancelTask(queueName: "logged", name: "done") { status } }', {}, admin)).errors).toBeUndefined();
    const taskKey = await createApiKey(gateway.services.db, { name: 'task watcher', scopes: ['tasks:read'] });
    const taskWs = await wsClient(taskKey.key);
    const taskId = taskWs.subscribe('subscription { taskStatusChanged(queueName: "logged", name: "done") { status } }');
    await eventually(async () => taskWs.of(taskId).some((m) => m.type === 'complete'), 5000, 10);
    await eventually(async () => linesOf(taskKey.apiKey.id, 'subscription ended').length === 1, 5000, 10);
    expect(linesOf(taskKey.apiKey.id, 'subscription ended')[0]).toMatchObject({ transport: 'graphql-ws', fields: ['taskStatusChanged'], operationName: null, events: 1, reason: 'completed' });
    taskWs.close();
    ws.close();
  });
});
