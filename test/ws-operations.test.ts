import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { overWs } from './helpers/transports.js';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';

// graphql-ws operations are requests too: each has a request id, one access line (`via: "graphql-ws"`) and is
// counted in /metrics, as an HTTP request is (src/edge/ws.ts).

interface Line {
  msg?: string;
  requestId?: string;
  method?: string;
  path?: string;
  operation?: string;
  outcome?: string;
  via?: string;
  ms?: number;
}

describe('graphql-ws operations', () => {
  let db: FreshDatabase;
  let gateway: Gateway;
  const lines: Line[] = [];
  beforeAll(async () => {
    db = await freshDatabase('pglite');
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const text of chunk.toString().split('\n')) if (text) lines.push(JSON.parse(text) as Line);
        done();
      },
    });
    gateway = await startGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', AUTH: 'off', ...db.env }), { log: pino({ level: 'info' }, sink) });
  });
  afterAll(async () => {
    await gateway?.close();
    await db?.drop();
  });

  const wsLines = () => lines.filter((l) => l.msg === 'request' && l.via === 'graphql-ws');
  const counted = async (type: string, outcome: string) => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`gateway_graphql_ws_operations_total{type="${type}",outcome="${outcome}"}`));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('a query: one access line with a request id, its name and outcome, and a count', async () => {
    const before = await counted('query', 'ok');
    const answer = await overWs(gateway.url, 'query Count { queues(first: 1) { totalCount } }');
    expect(answer.results).toEqual([{ data: { queues: { totalCount: 0 } } }]);
    await expect.poll(() => wsLines().filter((l) => l.operation === 'Count')).toHaveLength(1);
    const line = wsLines().find((l) => l.operation === 'Count')!;
    expect(line).toMatchObject({ method: 'WS', path: '/graphql', outcome: 'ok', via: 'graphql-ws' });
    // The connection's id (a new one: the upgrade sent none), then the operation's number on it.
    expect(line.requestId).toMatch(/^[0-9a-f-]{36}:1$/);
    expect(line.ms).toBeGreaterThanOrEqual(0);
    expect(await counted('query', 'ok')).toBe(before + 1);
  });

  it("the upgrade request's X-Request-Id names the connection's operations", async () => {
    const answer = await overWs(gateway.url, 'query Named { queues(first: 1) { totalCount } }', {}, { headers: { 'x-request-id': 'upgrade-7' } });
    expect(answer.results).toEqual([{ data: { queues: { totalCount: 0 } } }]);
    await expect.poll(() => wsLines().filter((l) => l.operation === 'Named')).toHaveLength(1);
    expect(wsLines().find((l) => l.operation === 'Named')!.requestId).toBe('upgrade-7:1');
  });

  it('an operation refused or failed is logged and counted as an error, with its own request id', async () => {
    const before = await counted('unknown', 'error');
    const invalid = await overWs(gateway.url, 'query Nope { nope }');
    expect(invalid.results[0]!.errors?.[0]?.message).toMatch(/Cannot query field "nope"/);
    // A socket carries no HTTP status: none leaks into the error's extensions.
    expect(JSON.stringify(invalid.results)).not.toContain('"http"');
    const failed = await overWs(gateway.url, 'query Missing { queue(name: "missing") { name } }');
    expect(failed.results[0]!.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // A document that does not validate has no operation chosen yet: it is logged as "anonymous".
    await expect.poll(() => wsLines().filter((l) => l.operation === 'anonymous' || l.operation === 'Missing')).toHaveLength(2);
    const [nope, missing] = ['anonymous', 'Missing'].map((name) => wsLines().find((l) => l.operation === name)!);
    expect(nope!.outcome).toBe('error');
    expect(missing!.outcome).toBe('error');
    expect(nope!.requestId).not.toBe(missing!.requestId);
    expect(await counted('unknown', 'error')).toBe(before + 1);
    expect(await counted('query', 'error')).toBeGreaterThanOrEqual(1);
  });
});
