import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';
import { DATABASES, freshDatabase } from './helpers/databases.js';
import { NO_WORKERS, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { exchange, httpRequestText, overSse, overWs, rawExchange, type Exchange, type RawAnswer } from './helpers/transports.js';

// The HTTP edge as a hostile or merely unusual client meets it, with raw requests on node:net sockets where fetch
// cannot say them: the request target and Host (src/http/request-target.ts, front-door.ts), pipelined requests
// (connection-order.ts), upgrades the gateway does not take, a refused body read as a client reads it
// (lingering-close.ts), slow clients (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS), 401 first with AUTH=on, and
// which way in (node:http door, direct /graphql runner, Yoga) a request takes.

const json = { 'content-type': 'application/json' };
const rpcBody = (method: string, params: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', method, params, id });

/** No stack, no install path, no internals: a JSON body (or none) and a request id. */
function expectCleanAnswer(a: RawAnswer, label: string): void {
  expect(a.headers['x-request-id'], label).toMatch(/^[\w.:-]+$/);
  expect(a.body, label).not.toMatch(/\bat \w|node_modules|\/work\/|\.ts:\d|\.js:\d|TypeError|Invalid URL/);
  if (a.status !== 204) expect(() => JSON.parse(a.body), `${label}: ${a.body}`).not.toThrow();
}

const code = (a: RawAnswer) => (JSON.parse(a.body) as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code;

interface Row {
  name: string;
  /** The request's bytes; `port` is the gateway's. */
  text: (port: number) => string;
  /** AUTH=off: [status, error code]; AUTH=on likewise. */
  off: [number, string?];
  on: [number, string?];
}

const loopback = (port: number) => `127.0.0.1:${port}`;
const TARGET_ROWS: Row[] = [
  { name: 'Host: a b, /healthz', text: () => httpRequestText('GET', '/healthz', { host: 'a b' }), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: x%zz, /healthz', text: () => httpRequestText('GET', '/healthz', { host: 'x%zz' }), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: x%zz, a JSON-RPC path (node door)', text: () => httpRequestText('POST', '/getQueue', { host: 'x%zz', ...json }, rpcBody('getQueue', { name: 'q' })), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: a b, a REST path (node door)', text: () => httpRequestText('GET', '/api/data/getPersonById?oid=1', { host: 'a b' }), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: user@host, /graphql', text: () => httpRequestText('POST', '/graphql', { host: 'me@127.0.0.1', ...json }, JSON.stringify({ query: '{ __typename }' })), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: a/b, /graphql', text: () => httpRequestText('GET', '/graphql?query=%7B__typename%7D', { host: 'localhost/x', accept: 'application/json' }), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: 999.1.1.1 (not an IPv4 address)', text: () => httpRequestText('GET', '/healthz', { host: '999.1.1.1' }), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: a.123 (a name URL parsing takes for an address)', text: () => httpRequestText('POST', '/getQueue', { host: 'a.123', ...json }, rpcBody('getQueue', { name: 'q' })), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: [1:2:3] (not an IPv6 address)', text: () => httpRequestText('GET', '/healthz', { host: '[1:2:3]:80' }), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: port over 65535', text: () => httpRequestText('GET', '/healthz', { host: 'localhost:70000' }), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'Host: [::1] and a port', text: (p) => httpRequestText('GET', '/healthz', { host: `[::1]:${p}` }), off: [200], on: [200] },
  { name: 'Host: a name with a trailing dot', text: () => httpRequestText('GET', '/healthz', { host: 'gateway.example.' }), off: [421, 'MISDIRECTED_REQUEST'], on: [200] },
  { name: 'absolute-form target, loopback authority', text: (p) => httpRequestText('GET', `http://${loopback(p)}/healthz`, { host: loopback(p) }), off: [200], on: [200] },
  { name: 'absolute-form target names the authority, not Host', text: (p) => httpRequestText('GET', `http://${loopback(p)}/healthz`, { host: 'evil.example' }), off: [200], on: [200] },
  { name: 'absolute-form target, foreign authority', text: (p) => httpRequestText('GET', 'http://evil.example/healthz', { host: loopback(p) }), off: [421, 'MISDIRECTED_REQUEST'], on: [200] },
  { name: 'absolute-form target, bad authority', text: (p) => httpRequestText('GET', 'http://x%zz/healthz', { host: loopback(p) }), off: [421, 'MISDIRECTED_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'absolute-form target with a query, JSON-RPC path', text: (p) => httpRequestText('POST', `http://${loopback(p)}/getQueue?x=1`, { host: loopback(p), ...json }, rpcBody('getQueue', { name: 'absent' })), off: [200], on: [401] },
  { name: 'absolute-form target, GraphQL over GET', text: (p) => httpRequestText('GET', `http://${loopback(p)}/graphql?query=%7B__typename%7D`, { host: loopback(p), accept: 'application/json' }), off: [200], on: [401, 'UNAUTHENTICATED'] },
  { name: 'OPTIONS *', text: (p) => httpRequestText('OPTIONS', '*', { host: loopback(p) }), off: [204], on: [204] },
  { name: 'OPTIONS * to a foreign Host', text: () => httpRequestText('OPTIONS', '*', { host: 'evil.example' }), off: [421, 'MISDIRECTED_REQUEST'], on: [204] },
  { name: 'GET *', text: (p) => httpRequestText('GET', '*', { host: loopback(p) }), off: [400, 'BAD_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'a target that is neither a path nor a URL', text: (p) => httpRequestText('GET', 'healthz', { host: loopback(p) }), off: [400, 'BAD_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'a target of another scheme', text: (p) => httpRequestText('GET', 'ftp://127.0.0.1/healthz', { host: loopback(p) }), off: [400, 'BAD_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'HTTP/1.1 without Host', text: () => httpRequestText('GET', '/healthz', {}), off: [400, 'BAD_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'HTTP/1.1 without Host, a JSON-RPC path', text: () => httpRequestText('POST', '/getQueue', { ...json }, rpcBody('getQueue', { name: 'q' })), off: [400, 'BAD_REQUEST'], on: [400, 'BAD_REQUEST'] },
  { name: 'CONNECT (a proxy tunnel)', text: (p) => httpRequestText('CONNECT', loopback(p), { host: loopback(p) }), off: [405, 'METHOD_NOT_ALLOWED'], on: [405, 'METHOD_NOT_ALLOWED'] },
];

/** `curl --http2 http://...`: an upgrade to h2c, which the gateway does not take. */
const h2c = { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA' };
const UPGRADE_ROWS: Row[] = [
  { name: 'h2c upgrade, /healthz', text: (p) => httpRequestText('GET', '/healthz', { host: loopback(p), ...h2c }), off: [200], on: [200] },
  { name: 'h2c upgrade, a JSON-RPC path', text: (p) => httpRequestText('POST', '/getQueue', { host: loopback(p), ...h2c, ...json }, rpcBody('getQueue', { name: 'absent' })), off: [200], on: [401] },
  { name: 'h2c upgrade, GraphQL', text: (p) => httpRequestText('POST', '/graphql', { host: loopback(p), ...h2c, ...json }, JSON.stringify({ query: '{ __typename }' })), off: [200], on: [401, 'UNAUTHENTICATED'] },
  { name: 'h2c upgrade, GraphQL over GET', text: (p) => httpRequestText('GET', '/graphql?query=%7B__typename%7D', { host: loopback(p), accept: 'application/json', ...h2c }), off: [200], on: [401, 'UNAUTHENTICATED'] },
  { name: 'a WebSocket upgrade asked by a POST to /graphql', text: (p) => httpRequestText('POST', '/graphql', { host: loopback(p), connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...json }, JSON.stringify({ query: '{ __typename }' })), off: [200], on: [401, 'UNAUTHENTICATED'] },
  { name: 'a WebSocket upgrade of another path', text: (p) => httpRequestText('GET', '/healthz', { host: loopback(p), connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' }), off: [200], on: [200] },
];

describe.each([
  ['off', {}],
  ['on', { AUTH: 'on' }],
] as const)('request target, Host and upgrades (AUTH=%s)', (auth, env) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { ...NO_WORKERS, ...env });
  });
  afterAll(() => t?.close());

  it.each([...TARGET_ROWS, ...UPGRADE_ROWS])('$name', async (row) => {
    const { answers, raw } = await rawExchange(t.url, row.text(t.gateway.port));
    expect(answers, raw.slice(0, 500)).toHaveLength(1);
    const [status, errorCode] = row[auth];
    const a = answers[0]!;
    expect(a.status, a.body).toBe(status);
    expectCleanAnswer(a, row.name);
    if (errorCode) expect(code(a)).toBe(errorCode);
    if (row.name.startsWith('OPTIONS') && status === 204) expect(a.headers.allow).toContain('POST');
    if (row.name.includes('h2c')) expect(a.headers.upgrade).toBeUndefined();
  });

  it('a refused Host does not end the connection: the next request on it is answered', async () => {
    const p = t.gateway.port;
    const { answers } = await rawExchange(t.url, [httpRequestText('GET', '/healthz', { host: 'a b' }), httpRequestText('GET', '/healthz', { host: loopback(p) })], { answers: 2 });
    expect(answers.map((a) => a.status)).toEqual([auth === 'off' ? 421 : 400, 200]);
  });

  it('graphql-ws still opens on /graphql', async () => {
    const key = auth === 'on' ? await makeKey(t, ['queues:read']) : undefined;
    const answer = await overWs(t.url, '{ queues { totalCount } }', {}, { init: key ? bearer(key) : {} });
    expect(answer.results[0]?.data).toEqual({ queues: { totalCount: 0 } });
  });
});

describe.each(DATABASES)('pipelined requests on one connection (%s)', (kind) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(kind, { ...NO_WORKERS });
  });
  afterAll(() => t?.close());

  const call = (p: number, path: string, body: string) => httpRequestText('POST', path, { host: loopback(p), ...json }, body);

  it('unsafe requests run in order: a write is seen by the read after it, on every door', async () => {
    const p = t.gateway.port;
    for (let round = 0; round < 5; round++) {
      const name = `piped-${round}`;
      const requests = [
        call(p, '/createQueue', rpcBody('createQueue', { name })),
        call(p, '/getQueue', rpcBody('getQueue', { name })),
        call(p, '/deleteQueue', rpcBody('deleteQueue', { name })),
        call(p, '/getQueue', rpcBody('getQueue', { name })),
        call(p, '/graphql', JSON.stringify({ query: `mutation { createQueue(input: {name: "${name}-g"}) { name } }` })),
        call(p, '/rpc', rpcBody('getQueue', { name: `${name}-g` })),
        httpRequestText('GET', `/graphql?query=${encodeURIComponent(`{ queue(name: "${name}-g") { name } }`)}`, { host: loopback(p), accept: 'application/json' }),
        call(p, '/deleteQueue', rpcBody('deleteQueue', { name: `${name}-g` })),
        call(p, '/getQueue', rpcBody('getQueue', { name: `${name}-g` })),
      ];
      // One write: the server holds every request before it answers the first.
      const { answers } = await rawExchange(t.url, requests.join(''), { answers: requests.length, timeoutMs: 20_000 });
      const bodies = answers.map((a) => JSON.parse(a.body) as Record<string, any>);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200]);
      expect(bodies[0]!.result?.name).toBe(name);
      expect(bodies[1]!.result?.name, JSON.stringify(bodies[1])).toBe(name);
      expect(bodies[2]!.error).toBeUndefined();
      expect(bodies[3]!.error?.code, JSON.stringify(bodies[3])).toBe(-32004);
      expect(bodies[4]!.data?.createQueue?.name).toBe(`${name}-g`);
      expect(bodies[5]!.result?.name, JSON.stringify(bodies[5])).toBe(`${name}-g`);
      expect(bodies[6]!.data?.queue?.name).toBe(`${name}-g`);
      expect(bodies[8]!.error?.code, JSON.stringify(bodies[8])).toBe(-32004);
    }
  });

  it('safe requests after each other still overlap: a slow read does not hold the next', async () => {
    const p = t.gateway.port;
    const reads = Array.from({ length: 4 }, () => httpRequestText('GET', '/healthz', { host: loopback(p) }));
    const { answers } = await rawExchange(t.url, reads.join(''), { answers: 4 });
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
  });

  it('nothing pipelined behind an answer that closes the connection runs', async () => {
    const p = t.gateway.port;
    const tooBig = httpRequestText('POST', '/createQueue', { host: loopback(p), ...json }, rpcBody('createQueue', { name: 'x'.repeat(2_000_000) }));
    const after = call(p, '/createQueue', rpcBody('createQueue', { name: 'after-413' }));
    const { answers } = await rawExchange(t.url, [tooBig, after], { answers: 2, timeoutMs: 3000 });
    expect(answers.map((a) => a.status)).toEqual([413]);
    expect((await rpc(t.url, 'getQueue', { name: 'after-413' })).body.error.code).toBe(-32004);
  });
});

describe('a body over MAX_BODY_BYTES is refused with a 413 the client reads (lingering close)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { ...NO_WORKERS });
  });
  afterAll(() => t?.close());

  const doors = [
    { name: 'a JSON-RPC path on the node door', path: '/getQueue', headers: json, code: (b: any) => b.error?.code },
    { name: '/rpc on the node door', path: '/rpc', headers: json, code: (b: any) => b.error?.code },
    { name: 'a REST path on the node door', path: '/v1/systems/s/webhook', headers: json, code: (b: any) => b.error?.code ?? b.code },
    { name: 'a JSON-RPC path through Yoga (same-origin page)', path: '/getQueue', headers: { ...json, origin: '' }, code: (b: any) => b.error?.code },
    { name: 'GraphQL', path: '/graphql', headers: json, code: (b: any) => b.errors?.[0]?.extensions?.code },
  ];

  function bigBodies(path: string, headers: Record<string, string>, tries: number): Promise<string[]> {
    const client = fileURLToPath(new URL('./helpers/big-body-client.mjs', import.meta.url));
    return new Promise((resolve, reject) => {
      execFile(process.execPath, [client, `${t.url}${path}`, JSON.stringify(headers), String(tries)], { maxBuffer: 1 << 20 }, (error, stdout) =>
        error ? reject(error) : resolve(JSON.parse(stdout) as string[]),
      );
    });
  }

  it.each(doors)('$name: 20 MiB from fetch, declared and streamed, 25 times: every try reads its 413', async ({ path, headers, code }) => {
    const sent: Record<string, string> = { ...headers, ...('origin' in headers && { origin: t.url }) };
    const seen = await bigBodies(path, sent, 25);
    const failures = seen.filter((line) => !line.startsWith('413 ') || code(JSON.parse(line.slice(4))) === undefined);
    expect(failures).toEqual([]);
  });

  it('a client that never finishes its body is closed after the linger time, not held', async () => {
    const p = t.gateway.port;
    const head = `POST /getQueue HTTP/1.1\r\nhost: ${loopback(p)}\r\ncontent-type: application/json\r\ncontent-length: ${50 * 1024 * 1024}\r\n\r\n`;
    const { answers, closed, ms } = await rawExchange(t.url, [head, Buffer.alloc(2 * 1024 * 1024, 'x')], { timeoutMs: 10_000, untilClosed: true });
    expect(answers.map((a) => a.status)).toEqual([413]);
    expect(answers[0]!.headers.connection).toBe('close');
    expect(closed).toBe(true);
    expect(ms).toBeLessThan(8000);
  });
});

describe('slow clients are cut; streams and sockets are not (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { ...NO_WORKERS, HTTP_HEADERS_TIMEOUT_MS: '400', HTTP_REQUEST_TIMEOUT_MS: '800' });
  });
  afterAll(() => t?.close());

  it('headers that never end: 408 in the JSON envelope with a request id, and the connection closed, while others are served', async () => {
    const p = t.gateway.port;
    const slow = rawExchange(t.url, `GET /healthz HTTP/1.1\r\nhost: ${loopback(p)}\r\nx-slow: `, { timeoutMs: 5000, untilClosed: true });
    const others = await Promise.all(Array.from({ length: 5 }, () => fetch(`${t.url}/healthz`).then((r) => r.status)));
    expect(others).toEqual([200, 200, 200, 200, 200]);
    const { answers, closed, ms } = await slow;
    expect(answers.map((a) => a.status)).toEqual([408]);
    expect(code(answers[0]!)).toBe('REQUEST_TIMEOUT');
    expect(answers[0]!.headers['x-request-id']).toBeDefined();
    expect(closed).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(350);
    expect(ms).toBeLessThan(2500);
  });

  it('a body that never ends: 408 and closed, on the node door and on /graphql', async () => {
    const p = t.gateway.port;
    for (const path of ['/getQueue', '/graphql']) {
      const head = `POST ${path} HTTP/1.1\r\nhost: ${loopback(p)}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"jsonrpc":`;
      const slow = rawExchange(t.url, head, { timeoutMs: 5000, untilClosed: true });
      expect((await rpc(t.url, 'listQueues', {})).status).toBe(200);
      const { answers, closed, ms } = await slow;
      expect(answers.map((a) => a.status), path).toEqual([408]);
      expect(closed).toBe(true);
      expect(ms).toBeLessThan(3000);
    }
  });

  it('an SSE stream and a graphql-ws socket outlive HTTP_REQUEST_TIMEOUT_MS', async () => {
    await rpc(t.url, 'createQueue', { name: 'long' });
    const subscription = 'subscription { queueChanged(name: "long") { name rate } }';
    const sse = overSse(t.url, subscription, {}, {}, 1);
    const ws = overWs(t.url, subscription, {}, { limit: 1 });
    await new Promise((r) => setTimeout(r, 2000));
    await rpc(t.url, 'changeQueueRate', { name: 'long', rate: 7 });
    const [fromSse, fromWs] = await Promise.all([sse, ws]);
    expect(fromSse.results[0]?.data?.queueChanged).toMatchObject({ name: 'long', rate: 7 });
    expect(fromWs.closeCode).toBeUndefined();
    expect(fromWs.results[0]?.data?.queueChanged).toMatchObject({ name: 'long', rate: 7 });
  });

  it('an idle keep-alive connection is not cut by them: a request after a pause longer than both is answered', async () => {
    const p = t.gateway.port;
    const request = httpRequestText('GET', '/healthz', { host: loopback(p) });
    const { connect } = await import('node:net');
    const socket = connect(p, '127.0.0.1');
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.write(request);
    await new Promise((r) => setTimeout(r, 1500));
    socket.write(request);
    await new Promise((r) => setTimeout(r, 300));
    socket.destroy();
    expect(text.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
  });

  it('HTTP_HEADERS_TIMEOUT_MS may not exceed HTTP_REQUEST_TIMEOUT_MS', async () => {
    const { loadConfig } = await import('../src/config.js');
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '1000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS/);
  });
});

describe('AUTH=on: a request without a valid key is 401 before anything else about it is looked at', () => {
  let t: TestGateway;
  let key: string;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { ...NO_WORKERS, AUTH: 'on', MAX_BODY_BYTES: '4096' });
    key = await makeKey(t, ['admin:all']);
  });
  afterAll(() => t?.close());

  const BIG = 'x'.repeat(10_000);
  const textPlain = { 'content-type': 'text/plain' };
  const sse = { accept: 'text/event-stream' };
  const rpcCode = (b: any) => b.error?.code;
  const gqlCode = (b: any) => b.errors?.[0]?.extensions?.code;
  /** [name, method, path, headers, body, the status with a valid key] */
  const ROWS: [string, string, string, Record<string, string>, string | undefined, number][] = [
    ['JSON-RPC path, text/plain body', 'POST', '/getQueue', textPlain, rpcBody('getQueue', { name: 'q' }), 415],
    ['JSON-RPC path, body over MAX_BODY_BYTES', 'POST', '/getQueue', json, rpcBody('getQueue', { name: BIG }), 413],
    ['JSON-RPC path, wrong method', 'GET', '/getQueue', {}, undefined, 405],
    ['/rpc, form-encoded body', 'POST', '/rpc', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1', 415],
    ['REST write, text/plain body', 'PUT', '/v1/type/DOCUMENT/ids/00000000-0000-4000-8000-000000000000', textPlain, 'hello', 415],
    ['REST path, wrong method', 'DELETE', '/api/data/getPersonById?oid=1', {}, undefined, 405],
    ['GraphQL, text/plain body (CSRF rule)', 'POST', '/graphql', textPlain, JSON.stringify({ query: '{ __typename }' }), 403],
    ['GraphQL, body over MAX_BODY_BYTES', 'POST', '/graphql', json, JSON.stringify({ query: `{ __typename } # ${BIG}` }), 413],
    ['GraphQL, not JSON', 'POST', '/graphql', json, '{"query":', 400],
    ['GraphQL over GET, a mutation', 'GET', `/graphql?query=${encodeURIComponent('mutation { deleteQueue(name: "q") { name } }')}`, { accept: 'application/json' }, undefined, 405],
  ];

  it.each(ROWS)('%s (%s %s): 401 without a key or with an unknown one, the usual refusal with one', async (name, method, path, headers, body, withKey) => {
    const p = t.gateway.port;
    const send = (extra: Record<string, string>) => rawExchange(t.url, httpRequestText(method, path, { host: loopback(p), ...headers, ...extra }, body));
    const sends: Record<string, string>[] = [{}, { authorization: 'Bearer gw_000000000000_unknownunknownunknownunknownunknownunknownun' }];
    for (const extra of sends) {
      const { answers } = await send(extra);
      const a = answers[0]!;
      expect(a.status, `${name}: ${a.body}`).toBe(401);
      expect(a.headers['www-authenticate']).toBe('Bearer');
      const parsed = JSON.parse(a.body);
      expect(path.startsWith('/graphql') ? gqlCode(parsed) : path.startsWith('/v1') || path.startsWith('/api') ? (parsed.error?.code ?? parsed.code ?? gqlCode(parsed)) : rpcCode(parsed), a.body).toBeDefined();
      expect(a.body).toContain(Object.keys(extra).length ? 'unknown' : 'API key is required');
    }
    const { answers } = await send(bearer(key));
    expect(answers[0]!.status, answers[0]!.body).toBe(withKey);
  });

  it.each([
    ['text/plain', textPlain, JSON.stringify({ query: 'subscription { queueChanged(name: "q") { name } }' })],
    ['over MAX_BODY_BYTES', json, JSON.stringify({ query: `subscription { queueChanged(name: "q") { name } } # ${BIG}` })],
  ])('SSE, %s: the 401 travels in a 200 stream, as graphql-sse clients read it', async (_name, headers, body) => {
    const { answers } = await rawExchange(t.url, httpRequestText('POST', '/graphql', { host: loopback(t.gateway.port), ...sse, ...headers }, body));
    expect(answers[0]!.status).toBe(200);
    expect(answers[0]!.headers['content-type']).toContain('text/event-stream');
    const data = /event: next\ndata: (.*)\n/.exec(answers[0]!.body)?.[1];
    expect(gqlCode(JSON.parse(data!))).toBe('UNAUTHENTICATED');
    expect(answers[0]!.body).toContain('event: complete');
  });

  it('what comes before the key: a bad Host (400) and a foreign Origin (403)', async () => {
    const p = t.gateway.port;
    const badHost = await rawExchange(t.url, httpRequestText('POST', '/getQueue', { host: 'a b', ...textPlain }, 'x'));
    expect(badHost.answers[0]!.status).toBe(400);
    const foreign = await rawExchange(t.url, httpRequestText('POST', '/graphql', { host: loopback(p), origin: 'https://evil.example', ...textPlain }, 'x'));
    expect(foreign.answers[0]!.status).toBe(403);
    expect(code(foreign.answers[0]!)).toBe('FORBIDDEN_ORIGIN');
  });
});

describe.each([
  ['off', {}],
  ['on', { AUTH: 'on' }],
] as const)('the way in a request takes on the default edge (AUTH=%s)', (auth, env) => {
  // Plain JSON POSTs, legacy calls and /graphql alike, are answered on the node:http edge (src/edge/node.ts: its access
  // line says `via`), the rest by Yoga's edge: read from the gateway's log, where Yoga writes a debug line for each
  // request whose GraphQL parameters it reads. With AUTH=on a request without a valid key is refused before either
  // reads them. test/every-edge.test.ts holds that every way answers alike.
  type Way = 'node:http' | 'yoga' | 'before params';
  let t: TestGateway;
  let key: string;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const db = await freshDatabase('pglite');
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', AUTH: 'off', MAX_BODY_BYTES: '4096', ...NO_WORKERS, ...db.env, ...env });
    const gateway = await startGateway(config, { log: pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }) });
    t = { gateway, url: gateway.url, db, close: async () => (await gateway.close(), await db.drop()) };
    key = await makeKey(t, ['queues:read']);
  });
  afterAll(() => t?.close());

  const gql = (query: string) => JSON.stringify({ query });
  /** [name, request, the way with AUTH=off, with AUTH=on and no key, with AUTH=on and a key (when not AUTH=off's)] */
  const ROWS: [string, Exchange, Way, Way, Way?][] = [
    ['a JSON-RPC call', { method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: 'q' }) }, 'node:http', 'node:http'],
    ['a /rpc batch', { method: 'POST', path: '/rpc', headers: json, body: `[${rpcBody('getQueue', { name: 'q' })}]` }, 'node:http', 'node:http'],
    ['a REST read', { method: 'GET', path: '/api/data/getPersonById?oid=1' }, 'node:http', 'node:http'],
    ['a chunked JSON-RPC call', { method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: 'q' }), chunked: true }, 'node:http', 'node:http'],
    ['a JSON-RPC body over MAX_BODY_BYTES', { method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: 'x'.repeat(5000) }) }, 'node:http', 'node:http'],
    ['a Host that is not a host name', { method: 'POST', path: '/getQueue', headers: { ...json, host: 'a b' }, body: rpcBody('getQueue', { name: 'q' }) }, 'node:http', 'node:http'],
    ['a JSON-RPC path over GET', { method: 'GET', path: '/getQueue' }, 'yoga', 'yoga'],
    ['a JSON-RPC call with an Origin', { method: 'POST', path: '/getQueue', headers: { ...json, origin: 'https://evil.example' }, body: rpcBody('getQueue', { name: 'q' }) }, 'yoga', 'yoga'],
    ['a dot segment', { method: 'POST', path: '/x/../getQueue', headers: json, body: rpcBody('getQueue', { name: 'q' }) }, 'yoga', 'yoga'],
    // With AUTH=on the browser rules take any Host: the node door answers it.
    ['a foreign Host', { method: 'POST', path: '/getQueue', headers: { ...json, host: 'evil.example' }, body: rpcBody('getQueue', { name: 'q' }) }, 'yoga', 'node:http', 'node:http'],
    ['a GraphQL query', { method: 'POST', path: '/graphql', headers: json, body: gql('{ queues(first: 1) { totalCount } }') }, 'node:http', 'node:http'],
    ['a GraphQL mutation', { method: 'POST', path: '/graphql', headers: json, body: gql('mutation { pauseQueue(name: "q") { name } }') }, 'node:http', 'node:http'],
    ['a GraphQL syntax error', { method: 'POST', path: '/graphql', headers: json, body: gql('{ queues {') }, 'node:http', 'node:http'],
    ['a GraphQL validation error', { method: 'POST', path: '/graphql', headers: json, body: gql('{ nope }') }, 'node:http', 'node:http'],
    ['an unknown GraphQL parameter', { method: 'POST', path: '/graphql', headers: json, body: JSON.stringify({ query: '{ __typename }', foo: 1 }) }, 'node:http', 'node:http'],
    ['a GraphQL POST asking for SSE', { method: 'POST', path: '/graphql', headers: { ...json, accept: 'text/event-stream' }, body: gql('{ __typename }') }, 'yoga', 'before params'],
    ['GraphQL over GET', { method: 'GET', path: '/graphql?query=%7B__typename%7D', headers: { accept: 'application/json' } }, 'yoga', 'before params'],
  ];

  it.each(ROWS)('%s', async (name, request, off, on, onWithKey = off) => {
    const parsed = () => lines.filter((l) => l.msg === 'Parsing request to extract GraphQL parameters').length;
    const way = async (headers: Record<string, string>): Promise<Way> => {
      const before = parsed();
      const answer = await exchange(t.url, { ...request, headers: { ...request.headers, ...headers } });
      const access = lines.filter((l) => l.msg === 'request' && l.requestId === answer.headers['x-request-id']);
      expect(access, `${name}: one access line`).toHaveLength(1);
      if (access[0]!.via === 'node:http') return 'node:http';
      if (parsed() > before) return 'yoga';
      if (request.path.startsWith('/graphql') && answer.body.includes('UNAUTHENTICATED')) return 'before params';
      return 'yoga';
    };
    expect(await way({})).toBe(auth === 'off' ? off : on);
    if (auth === 'on') expect(await way(bearer(key))).toBe(onWithKey);
  });

  it('a caller that goes away mid-body gets no answer and costs no error line; the next call is answered', async () => {
    const { hostname, port } = new URL(t.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({ hostname, port, path: '/getQueue', method: 'POST', headers: { ...json, ...bearer(key), 'content-length': '100' }, agent: false });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write('{"jsonrpc":"2.0",');
      setTimeout(() => req.destroy(), 50);
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
    const next = await exchange(t.url, { method: 'POST', path: '/getQueue', headers: { ...json, ...bearer(key) }, body: rpcBody('getQueue', { name: 'q' }) });
    expect(next.status).toBe(200);
  });
});
