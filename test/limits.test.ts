import { Writable } from 'node:stream';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { getIntrospectionQuery } from 'graphql';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';
import { gql, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { bearer, makeKey } from './helpers/keys.js';
import { eventually } from './helpers/sink.js';
import { MemoryRateLimiter } from '../src/access/rate-limit.js';

// Body size, GraphQL depth / aliases / cost, page size, per-key rate limit, request ids and JSON logs.

describe('limits', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { MAX_BODY_BYTES: '2048', GRAPHQL_MAX_DEPTH: '4', GRAPHQL_MAX_ALIASES: '3', GRAPHQL_MAX_COST: '600', MAX_PAGE_SIZE: '100' });
  });
  afterAll(() => t?.close());

  it('/graphql answers 413 to a body over MAX_BODY_BYTES, declared or streamed', async () => {
    const big = JSON.stringify({ query: `{ queues(filter: {namePrefix: "${'x'.repeat(3000)}"}) { totalCount } }` });
    const declared = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ errors: [{ extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
    const streamed = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${t.url}/graphql`);
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(big.slice(0, 1500));
      req.end(big.slice(1500));
    });
    expect(streamed).toBe(413);
    expect((await gql(t.url, '{ queues { totalCount } }')).status).toBe(200);
    // Within the limit, a streamed body is read once by the gateway and handed whole to Yoga (whose own limit is off).
    const small = JSON.stringify({ query: '{ queues { totalCount } }' });
    const streamedSmall = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(`${t.url}/graphql`);
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write(small.slice(0, 10));
      req.end(small.slice(10));
    });
    expect(streamedSmall.status).toBe(200);
    expect(JSON.parse(streamedSmall.body)).toMatchObject({ data: { queues: { totalCount: expect.any(Number) } } });
  });

  it('depth, aliases and cost over their limits answer GRAPHQL_VALIDATION_FAILED (400); JSON-RPC -32602', async () => {
    // A depth-5 selection needs a type that nests; the connection types give depth 4 at most, so lower the bar.
    const offLines: any[] = [];
    const sink = new Writable({ write: (c, _e, done) => (offLines.push(...String(c).split('\n').filter(Boolean).map((l) => JSON.parse(l))), done()) });
    const low = await startGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: 'memory://low', GRAPHQL_MAX_DEPTH: '2' }), { log: pino({ level: 'info' }, sink) });
    // AUTH defaults to off without DATABASE_URL, and the gateway says so.
    expect(offLines.some((l) => /authentication is OFF/.test(l.msg) && l.level === 40)).toBe(true);
    try {
      const deep = await gql(low.url, '{ queues { nodes { name } } }');
      expect(deep.status).toBe(400);
      expect(deep.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
      expect(deep.errors?.[0]?.message).toContain('GRAPHQL_MAX_DEPTH');
      const viaFragment = await gql(low.url, '{ ...Q } fragment Q on Query { queues { ...C } } fragment C on QueueConnection { nodes { name } }');
      expect(viaFragment.errors?.[0]?.message).toContain('3 fields deep');
      expect((await gql(low.url, '{ queues { totalCount } }')).status).toBe(200);
      expect((await gql(low.url, getIntrospectionQuery())).status).toBe(200); // introspection fields add no depth
      const legacy = await rpc(low.url, 'listQueues', {});
      expect(legacy.body.error).toMatchObject({ code: -32602, data: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    } finally {
      await low.close();
    }
    const aliases = await gql(t.url, '{ a: queues { totalCount } b: queues { totalCount } c: queues { totalCount } d: queues { totalCount } }');
    expect(aliases.status).toBe(400);
    expect(aliases.errors?.[0]?.message).toContain('4 aliases');
    const cost = await gql(t.url, 'query($n: Int) { queues(first: $n) { nodes { name description rate labels status paused } } }', { n: 100 });
    expect(cost.status).toBe(400);
    expect(cost.errors?.[0]?.message).toContain('GRAPHQL_MAX_COST');
    expect((await gql(t.url, 'query($n: Int) { queues(first: $n) { nodes { name description rate labels status paused } } }', { n: 10 })).status).toBe(200);
  });

  it('a page over MAX_PAGE_SIZE is refused naming the argument (GraphQL and legacy)', async () => {
    const g = await gql(t.url, '{ queues(first: 101) { totalCount } }');
    expect(g.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'first', message: 'at most 100' }] });
    const legacy = await rpc(t.url, 'listQueues', { pageSize: 101 });
    expect(legacy.body.error).toMatchObject({ code: -32602, data: { fields: [{ field: 'params.pageSize', message: 'must be at most 100 (MAX_PAGE_SIZE)' }] } });
  });

  it('returns the caller\'s sane X-Request-Id, replaces an insane one, and makes one up otherwise', async () => {
    const mine = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { 'x-request-id': 'abc-123.4' } });
    expect(mine.headers.get('x-request-id')).toBe('abc-123.4');
    const insane = await fetch(`${t.url}/getQueue`, { method: 'POST', headers: { 'x-request-id': 'bad id\u00e9' }, body: '{}' });
    expect(insane.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const none = await fetch(`${t.url}/healthz`);
    expect(none.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('rate limit and logs', () => {
  let gateway: Gateway;
  let db: FreshDatabase;
  const lines: any[] = [];
  beforeAll(async () => {
    db = await freshDatabase('pglite');
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', AUTH: 'on', RATE_LIMIT_PER_MINUTE: '3', ...db.env });
    gateway = await startGateway(config, { log: pino({ level: 'info' }, sink) });
  });
  afterAll(async () => {
    await gateway?.close();
    await db?.drop();
  });

  it('answers 429 with Retry-After once a key spent its tokens: GraphQL and JSON-RPC (-32029); other keys unaffected', async () => {
    const { createApiKey } = await import('../src/access/api-keys.js');
    const key = (await createApiKey(gateway.services.db, { name: 'busy', scopes: ['queues:read'] })).key;
    const calm = (await createApiKey(gateway.services.db, { name: 'calm', scopes: ['queues:read'] })).key;
    for (let i = 0; i < 3; i++) expect((await gql(gateway.url, '{ queues { totalCount } }', {}, bearer(key))).status).toBe(200);
    const res = await fetch(`${gateway.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...bearer(key) }, body: JSON.stringify({ query: '{ queues { totalCount } }' }) });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) } }] });
    const legacy = await rpc(gateway.url, 'listQueues', {}, {}, bearer(key));
    expect(legacy.status).toBe(429);
    expect(legacy.body.error).toMatchObject({ code: -32029, data: { code: 'RATE_LIMITED' } });
    expect((await gql(gateway.url, '{ queues { totalCount } }', {}, bearer(calm))).status).toBe(200);
  });

  it('logs one JSON line per request with its request id', async () => {
    await fetch(`${gateway.url}/healthz`, { headers: { 'x-request-id': 'trace-me-1' } });
    await eventually(async () => lines.some((l) => l.requestId === 'trace-me-1'), 2000, 5).catch(() => undefined); // the expect says what is missing
    expect(lines.find((l) => l.requestId === 'trace-me-1')).toMatchObject({ msg: 'request', method: 'GET', path: '/healthz', status: 200, level: 30 });
  });

  it('token bucket refills continuously', async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter(60, () => now);
    for (let i = 0; i < 60; i++) expect((await limiter.take('k')).allowed).toBe(true);
    expect(await limiter.take('k')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 1000;
    expect((await limiter.take('k')).allowed).toBe(true);
    expect((await new MemoryRateLimiter(0).take('k')).allowed).toBe(true);
  });
});
