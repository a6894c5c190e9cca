import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { setAtPath, webhookAdapter, webhookConfigSchema } from '../../src/channels/webhook.js';
import { startSink, type Sink } from './sink.js';
import { LOOPBACK } from './sink.js';

let sink: Sink;
const config = webhookConfigSchema.parse({});
beforeAll(async () => {
  sink = await startSink();
});
beforeEach(() => {
  sink.requests.length = 0;
  sink.reply({ status: 200, body: 'ok' });
});
afterAll(() => sink.close());

describe('setAtPath', () => {
  it('writes into a copy, through objects and array indexes, creating missing steps', () => {
    const body = { a: { b: { text: 'old', keep: 1 } }, items: [{ text: 'x' }] };
    expect(setAtPath(body, 'a.b.text', 'hi')).toEqual({ a: { b: { text: 'hi', keep: 1 } }, items: [{ text: 'x' }] });
    expect(setAtPath(body, 'items.0.text', 'hi')).toEqual({ a: { b: { text: 'old', keep: 1 } }, items: [{ text: 'hi' }] });
    expect(body.a.b.text).toBe('old');
    expect(setAtPath(undefined, 'x.0.y', 'v')).toEqual({ x: [{ y: 'v' }] });
    expect(() => setAtPath({ a: 'scalar' }, 'a.b', 'v')).toThrow(/not an object/);
    expect(() => setAtPath({ a: [] }, 'a.b', 'v')).toThrow(/array index/);
  });
});

describe('webhook adapter', () => {
  it('performs the request as given: method, NameValue headers (duplicates kept), body with text at textFieldPath', async () => {
    const body = { chat: { messages: [{ text: 'placeholder', id: 7 }] }, meta: 'm' };
    const outcome = await webhookAdapter.send(
      {
        url: `${sink.url}/hook?x=1`,
        method: 'PUT',
        headers: [
          { name: 'X-Token', value: 'abc' },
          { name: 'X-Tag', value: 'one' },
          { name: 'X-Tag', value: 'two' },
        ],
        body,
        textFieldPath: 'chat.messages.0.text',
        text: 'Hello, Ünïcode',
      },
      config, LOOPBACK);
    expect(outcome).toEqual({ kind: 'delivered', detail: 'HTTP 200' });
    const [req] = sink.requests;
    expect(req?.method).toBe('PUT');
    expect(req?.url).toBe('/hook?x=1');
    expect(req?.headers['x-token']).toBe('abc');
    expect(req?.rawHeaders.filter((_, i, all) => i % 2 === 1 && all[i - 1] === 'X-Tag')).toEqual(['one', 'two']);
    expect(req?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(req?.body ?? '')).toEqual({ chat: { messages: [{ text: 'Hello, Ünïcode', id: 7 }] }, meta: 'm' });
    expect(body.chat.messages[0]?.text).toBe('placeholder');
  });

  it('keeps a caller Content-Type and sends no body with GET, HEAD or TRACE', async () => {
    for (const method of ['GET', 'HEAD', 'TRACE', 'OPTIONS', 'DELETE', 'PATCH', 'POST'] as const) {
      const outcome = await webhookAdapter.send(
        { url: sink.url, method, body: { a: 1 }, headers: [{ name: 'content-type', value: 'application/vnd.x+json' }] },
        config, LOOPBACK);
      expect(outcome.kind).toBe('delivered');
    }
    expect(sink.requests.map((r) => [r.method, r.body])).toEqual([
      ['GET', ''],
      ['HEAD', ''],
      ['TRACE', ''],
      ['OPTIONS', '{"a":1}'],
      ['DELETE', '{"a":1}'],
      ['PATCH', '{"a":1}'],
      ['POST', '{"a":1}'],
    ]);
    expect(sink.requests[6]?.headers['content-type']).toBe('application/vnd.x+json');
  });

  it('enforces timeOutSeconds: a slow peer is retryable', async () => {
    sink.reply({ status: 200, delayMs: 3000 });
    const started = Date.now();
    const outcome = await webhookAdapter.send({ url: sink.url, body: {}, timeOutSeconds: 1 }, config, LOOPBACK);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(outcome).toMatchObject({ kind: 'retryable', reason: expect.stringContaining('timeout') });
  });

  it('classifies statuses: 429 with Retry-After, 503 HTTP-date, 5xx retryable, 4xx permanent', async () => {
    const at = new Date(Date.now() + 60_000).toUTCString();
    sink.reply(
      { status: 429, headers: { 'Retry-After': '42' }, body: 'slow down' },
      { status: 503, headers: { 'Retry-After': at } },
      { status: 500 },
      { status: 404, body: 'nope' },
    );
    const send = () => webhookAdapter.send({ url: sink.url, body: {} }, config, LOOPBACK);
    expect(await send()).toEqual({ kind: 'retryable', reason: 'HTTP 429: slow down', retryAfterMs: 42_000 });
    const second = await send();
    expect(second.kind).toBe('retryable');
    if (second.kind === 'retryable') expect(second.retryAfterMs).toBeGreaterThan(55_000);
    expect((await send()).kind).toBe('retryable');
    expect(await send()).toEqual({ kind: 'permanent', reason: 'HTTP 404: nope' });
  });

  it('is permanent for an unusable textFieldPath or header, without calling the peer', async () => {
    expect((await webhookAdapter.send({ url: sink.url, body: { a: 'x' }, textFieldPath: 'a.b', text: 't' }, config, LOOPBACK)).kind).toBe('permanent');
    expect((await webhookAdapter.send({ url: sink.url, headers: [{ name: 'X-Bad', value: 'a\nb' }] }, config, LOOPBACK)).kind).toBe('permanent');
    expect(sink.requests).toHaveLength(0);
  });
});
