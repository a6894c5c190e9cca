import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';

// The JSON-RPC 2.0 envelope rules, on the documented paths (the database does not matter here).

describe('JSON-RPC envelope', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { MAX_BODY_BYTES: '2048' });
  });
  afterAll(() => t?.close());

  it('answers malformed JSON with -32700 and id null, HTTP 200', async () => {
    const r = await post(t.url, '/getQueue', '{"jsonrpc": "2.0", "method": ');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid JSON' } });
  });

  it('answers a non-object or a missing method with -32600', async () => {
    for (const body of ['[1]', '"x"', '42', 'null', '{"jsonrpc":"2.0","id":"7"}', '{"jsonrpc":"1.0","method":"getQueue","id":"7"}']) {
      const r = await post(t.url, '/getQueue', body);
      expect(r.body.error.code, body).toBe(-32600);
    }
    const withId = await post(t.url, '/getQueue', '{"jsonrpc":"2.0","id":"7"}');
    expect(withId.body.id).toBe('7');
    expect(withId.body.error.data.fields).toEqual([{ field: 'method', message: 'is required and must be a non-empty string' }]);
    expect((await post(t.url, '/getQueue', '{"method":"getQueue","id":{"a":1}}')).body.error.code).toBe(-32600);
  });

  it('answers a method naming another operation than the path with -32601', async () => {
    const r = await post(t.url, '/getQueue', JSON.stringify({ jsonrpc: '2.0', method: 'deleteQueue', params: { name: 'x' }, id: 9 }));
    expect(r.body).toMatchObject({ id: 9, error: { code: -32601 } });
  });

  it('answers params that are not an object with -32602', async () => {
    const r = await post(t.url, '/getQueue', JSON.stringify({ jsonrpc: '2.0', method: 'getQueue', params: ['alpha'], id: 1 }));
    expect(r.body.error).toMatchObject({ code: -32602, data: { fields: [{ field: 'params' }] } });
  });

  it('refuses a body over the limit with HTTP 413 and writes nothing', async () => {
    const r = await rpc(t.url, 'createQueue', { name: 'big', description: 'x'.repeat(4000) });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe(-32013);
    expect((await rpc(t.url, 'getQueue', { name: 'big' })).body.error.code).toBe(-32004);
  });

  it('refuses GET on a JSON-RPC path with 405', async () => {
    const res = await fetch(`${t.url}/getQueue`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('serves /healthz, /readyz and an OpenAPI 3.1 document of every legacy path', async () => {
    expect(await (await fetch(`${t.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', failing: [], checks: { database: 'ok', migrations: 'ok', listener: 'ok', draining: false } });
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as { openapi: string; paths: Record<string, any> };
    expect(doc.openapi).toBe('3.1.0');
    for (const p of ['/createQueue', '/getQueue', '/listQueues', '/deleteQueue', '/openQueue', '/closeQueue', '/updateQueue', '/searchQueue', '/searchQueueLabels', '/changeQueueRate', '/pauseQueue', '/resumeQueue']) {
      expect(doc.paths[p]?.post?.requestBody, p).toBeDefined();
    }
    const create = doc.paths['/createQueue'].post.requestBody.content['application/json'].schema.properties.params;
    expect(create.properties.name.pattern).toBeDefined();
    expect(doc.paths['/pauseQueue'].post.requestBody.content['application/json'].schema.properties.result).toBeDefined();
  });
});
