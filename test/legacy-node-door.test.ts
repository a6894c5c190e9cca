import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { NO_WORKERS } from './helpers/gateway.js';

// Plain legacy calls are answered on node:http (src/edge/node.ts), the rest through Yoga's plugins. Two
// gateways on one PostgreSQL database, one with every legacy call through Yoga, get the same requests: every answer
// must be the same, byte for byte, status line and headers included (but the date, and the ids and times that are
// new per request). The access log says which way each request took.

interface Exchange {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent with Content-Length, or in chunks (no Content-Length) when `chunked`. */
  body?: string;
  chunked?: boolean;
}

interface Answer {
  status: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on its own connection, answered as the bytes say. */
function exchange(url: string, e: Exchange): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...e.headers };
    if (e.body !== undefined && !e.chunked) headers['content-length'] = String(Buffer.byteLength(e.body));
    // The path as given (a URL would resolve its dot segments before sending).
    const { hostname, port } = new URL(url);
    const req = httpRequest({ hostname, port, path: e.path, method: e.method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: `${res.statusCode} ${res.statusMessage}`, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (e.body !== undefined && e.chunked) {
      // Written in two parts so the server cannot see the end before the first.
      const half = Math.floor(e.body.length / 2);
      req.write(e.body.slice(0, half));
      setTimeout(() => req.end(e.body!.slice(half)), 20);
    } else req.end(e.body);
  });
}

const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** The answer with what is new per request (the date, a generated request id, times and generated ids) blanked. */
function comparable(a: Answer, givenRequestId: boolean): Answer {
  const { date, ...headers } = a.headers;
  expect(date).toBeDefined();
  if (!givenRequestId) {
    expect(headers['x-request-id']).toMatch(UUID);
    headers['x-request-id'] = '<new>';
  }
  return { ...a, headers, body: a.body.replace(ISO, '<time>').replace(UUID, '<uuid>') };
}

const json = { 'content-type': 'application/json' };
const rpcBody = (method: string, params: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', method, params, id });
const BIG = 'x'.repeat(5000);

/** The table: each request goes to both gateways; `door` tells writes apart. */
const TABLE: { name: string; make: (door: string) => Exchange }[] = [
  { name: 'create a queue', make: (d) => ({ method: 'POST', path: '/createQueue', headers: json, body: rpcBody('createQueue', { name: `q-${d}`, rate: 3, labels: ['a'] }) }) },
  { name: 'read it', make: (d) => ({ method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: `q-${d}` }, 'r') }) },
  { name: 'read a missing one', make: () => ({ method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: 'absent' }) }) },
  { name: 'bad params', make: () => ({ method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: 7, extra: true }) }) },
  { name: 'a NUL in params', make: () => ({ method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: 'a\u0000b' }) }) },
  { name: 'not JSON', make: () => ({ method: 'POST', path: '/getQueue', headers: json, body: '{"jsonrpc":' }) },
  { name: 'another method', make: () => ({ method: 'POST', path: '/getQueue', headers: json, body: rpcBody('deleteQueue', { name: 'x' }) }) },
  { name: 'text/plain', make: () => ({ method: 'POST', path: '/getQueue', headers: { 'content-type': 'text/plain' }, body: rpcBody('getQueue', { name: 'x' }) }) },
  { name: 'no content type', make: () => ({ method: 'POST', path: '/getQueue', body: rpcBody('getQueue', { name: 'x' }) }) },
  { name: 'over MAX_BODY_BYTES, declared', make: () => ({ method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: BIG }) }) },
  { name: 'over MAX_BODY_BYTES, chunked', make: () => ({ method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: BIG }), chunked: true }) },
  { name: 'a chunked body within the limit', make: (d) => ({ method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: `q-${d}` }), chunked: true }) },
  { name: 'an empty body', make: () => ({ method: 'POST', path: '/getQueue', headers: json, body: '' }) },
  { name: 'a sane X-Request-Id', make: () => ({ method: 'POST', path: '/getQueue', headers: { ...json, 'x-request-id': 'caller-id.1' }, body: rpcBody('getQueue', { name: 'absent' }) }) },
  { name: 'an insane X-Request-Id', make: () => ({ method: 'POST', path: '/getQueue', headers: { ...json, 'x-request-id': 'a b' }, body: rpcBody('getQueue', { name: 'absent' }) }) },
  {
    name: '/rpc batch with a notification',
    make: (d) => ({
      method: 'POST',
      path: '/rpc',
      headers: json,
      body: JSON.stringify([{ jsonrpc: '2.0', method: 'getQueue', params: { name: `q-${d}` }, id: 1 }, { jsonrpc: '2.0', method: 'getQueue', params: { name: 'x' } }, { method: 'nope', id: 3 }]),
    }),
  },
  { name: '/rpc notification only', make: () => ({ method: 'POST', path: '/rpc', headers: json, body: JSON.stringify({ jsonrpc: '2.0', method: 'getQueue', params: { name: 'x' } }) }) },
  { name: '/rpc empty batch', make: () => ({ method: 'POST', path: '/rpc', headers: json, body: '[]' }) },
  { name: 'REST read', make: () => ({ method: 'GET', path: '/api/data/getPersonById?oid=1000000001' }) },
  { name: 'REST bad query', make: () => ({ method: 'GET', path: '/api/data/getPersonById?oid=&oid=2' }) },
  { name: 'REST path parameters', make: () => ({ method: 'GET', path: '/v1/type/DOCUMENT/ids/not-a-uuid?pageSize=5' }) },
  { name: 'REST write, bad body', make: () => ({ method: 'PUT', path: '/v1/type/DOCUMENT/ids/00000000-0000-4000-8000-000000000000', headers: json, body: '{"a":' }) },
  { name: 'REST GET with a text body', make: () => ({ method: 'GET', path: '/api/data/getPersonById?oid=1', headers: { 'content-type': 'text/plain' }, body: 'hello' }) },
  { name: 'a wrong method (Yoga both ways)', make: () => ({ method: 'GET', path: '/getQueue' }) },
  { name: 'a foreign Origin (Yoga both ways)', make: () => ({ method: 'POST', path: '/getQueue', headers: { ...json, origin: 'https://evil.example' }, body: rpcBody('getQueue', { name: 'x' }) }) },
  { name: 'a dot segment (Yoga both ways)', make: () => ({ method: 'POST', path: '/x/../getQueue', headers: json, body: rpcBody('getQueue', { name: 'x' }) }) },
  { name: 'a Host that is not a host name', make: () => ({ method: 'POST', path: '/getQueue', headers: { ...json, host: 'a b' }, body: rpcBody('getQueue', { name: 'x' }) }) },
  { name: 'a Host with a bad escape', make: () => ({ method: 'GET', path: '/api/data/getPersonById?oid=1', headers: { host: 'x%zz' } }) },
  { name: 'an absolute-form target', make: (d) => ({ method: 'POST', path: 'http://localhost/getQueue', headers: json, body: rpcBody('getQueue', { name: `q-${d}` }) }) },
  { name: 'an absolute-form target naming a foreign host (Yoga both ways)', make: () => ({ method: 'POST', path: 'http://evil.example/getQueue', headers: json, body: rpcBody('getQueue', { name: 'x' }) }) },
  { name: 'a foreign Host (Yoga both ways)', make: () => ({ method: 'POST', path: '/getQueue', headers: { ...json, host: 'evil.example' }, body: rpcBody('getQueue', { name: 'x' }) }) },
];

describe('legacy calls on node:http and through Yoga', () => {
  let db: FreshDatabase;
  let viaNode: Gateway;
  let viaYoga: Gateway;
  const accessLines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    db = await freshDatabase('postgres');
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', AUTH: 'off', LOG_LEVEL: 'info', MAX_BODY_BYTES: '4096', ...NO_WORKERS, ...db.env });
    // The node door's access lines, read from its real log (the Yoga door's are not kept).
    const log = pino({ level: 'info' }, { write: (line: string) => void accessLines.push(JSON.parse(line) as Record<string, unknown>) });
    viaNode = await startGateway(config, { log });
    viaYoga = await startGateway({ ...config, MIGRATE_ON_START: false }, { log: pino({ level: 'silent' }), edge: 'yoga' });
  });
  afterAll(async () => {
    await viaNode?.close();
    await viaYoga?.close();
    await db?.drop();
  });

  it.each(TABLE)('$name: the same answer both ways', async ({ make }) => {
    const [fromNode, fromYoga] = [await exchange(viaNode.url, make('node')), await exchange(viaYoga.url, make('yoga'))];
    const givenId = make('node').headers?.['x-request-id'] === 'caller-id.1';
    const node = comparable(fromNode, givenId);
    const yoga = comparable(fromYoga, givenId);
    expect(node).toEqual({ ...yoga, body: yoga.body.replaceAll('q-yoga', 'q-node') });
  });

  it('counts the requests of the table alike both ways (gateway_http_requests_total, durations observed)', async () => {
    const counted = async (g: Gateway) =>
      (await (await fetch(`${g.url}/metrics`)).text())
        .split('\n')
        .filter((line) => /^gateway_http_request(s_total|_duration_seconds_count)\{/.test(line) && !line.includes('path="/metrics"'))
        .sort();
    const fromNode = await counted(viaNode);
    expect(fromNode.some((line) => line.startsWith('gateway_http_requests_total{method="POST",path="/getQueue",status="413"} 2'))).toBe(true);
    expect(fromNode).toEqual(await counted(viaYoga));
  });

  it('a caller that goes away mid-body gets no answer and costs no error line; the next call is answered', async () => {
    accessLines.length = 0;
    const { hostname, port } = new URL(viaNode.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({ hostname, port, path: '/getQueue', method: 'POST', headers: { ...json, 'content-length': '100' }, agent: false });
      req.on('error', () => resolve());
      req.write('{"jsonrpc":"2.0",');
      setTimeout(() => req.destroy(), 50);
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(accessLines.filter((l) => Number(l.level) >= 50)).toEqual([]);
    expect((await exchange(viaNode.url, { method: 'POST', path: '/getQueue', headers: json, body: rpcBody('getQueue', { name: 'q-node' }) })).status).toBe('200 OK');
  });

  it('answers the plain calls on node:http and leaves the others to Yoga (its access line says which)', async () => {
    for (const row of TABLE) {
      accessLines.length = 0;
      await exchange(viaNode.url, row.make('again'));
      const lines = accessLines.filter((l) => l.msg === 'request');
      expect(lines, row.name).toHaveLength(1);
      expect(lines[0]!.via, row.name).toBe(row.name.includes('(Yoga both ways)') ? undefined : 'node:http');
    }
  });
});
