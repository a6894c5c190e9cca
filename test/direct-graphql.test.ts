import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchema, createYoga } from 'graphql-yoga';
import type { TestGateway } from './helpers/gateway.js';
import { freshDatabase } from './helpers/databases.js';
import { bearer, makeKey } from './helpers/keys.js';
import { jsonAnswerType } from '../src/edge/answer-type.js';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';

// JSON POSTs to /graphql are answered on the node:http edge (src/edge/node.ts), everything through the one pipeline.
// Each request of the table is sent to two gateways on one database: the default one and one whose every request
// goes through Yoga's edge (`edge: 'yoga'`). Their answers must be the same, and the node edge must have answered
// the first whenever the request is a JSON POST asking for JSON (its access line says `via: "node:http"`).

interface Case {
  name: string;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Whether the node edge answers it (false: Yoga's edge, for an Accept only Yoga answers). */
  direct: boolean;
}

async function answerOf(url: string, body: Record<string, unknown>, headers: Record<string, string>) {
  const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    wwwAuthenticate: res.headers.get('www-authenticate'),
    retryAfter: res.headers.get('retry-after') !== null,
    requestId: res.headers.get('x-request-id') !== null,
    body: text,
  };
}

/** Two gateways on one database, the first observed: `overNode()` counts the requests its node:http edge answered. */
async function startObserved(env: Record<string, string>): Promise<TestGateway & { viaYoga: string; overNode(): number; closeAll(): Promise<void> }> {
  let overNode = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      overNode += chunk.toString().split('"via":"node:http"').length - 1;
      done();
    },
  });
  const db = await freshDatabase('postgres');
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', AUTH: 'off', ...db.env, ...env });
  const gateway = await startGateway(config, { log: pino({ level: 'info' }, sink) });
  const yogaGateway = await startGateway({ ...config, MIGRATE_ON_START: false }, { log: pino({ level: 'silent' }), edge: 'yoga' });
  const closeAll = async () => {
    await yogaGateway.close();
    await gateway.close();
    await db.drop();
  };
  return { gateway, url: gateway.url, db, viaYoga: yogaGateway.url, overNode: () => overNode, close: closeAll, closeAll };
}

async function compare(t: Awaited<ReturnType<typeof startObserved>>, c: Case) {
  const before = t.overNode();
  const direct = await answerOf(t.url, c.body, c.headers ?? {});
  expect(t.overNode() > before, 'answered by the node edge').toBe(c.direct);
  const yoga = await answerOf(t.viaYoga, c.body, c.headers ?? {});
  expect(direct).toEqual(yoga);
  return direct;
}

describe('direct door for /graphql (AUTH=off)', () => {
  let t: Awaited<ReturnType<typeof startObserved>>;
  beforeAll(async () => {
    t = await startObserved({ GRAPHQL_MAX_DEPTH: '4' });
    await answerOf(t.url, { query: 'mutation { createQueue(input: { name: "q1", rate: 2, labels: ["a"] }) { name } }' }, {});
  });
  afterAll(async () => t?.close());

  const gr = { accept: 'application/graphql-response+json' };
  const cases: Case[] = [
    { name: 'a query', body: { query: '{ queue(name: "q1") { name rate labels createTime } }' }, direct: true },
    { name: 'a query, graphql-response+json', body: { query: '{ queue(name: "q1") { name } }' }, headers: gr, direct: true },
    { name: 'variables and operationName', body: { query: 'query A($n: String!) { queue(name: $n) { name } } query B { queues(first: 1) { totalCount } }', variables: { n: 'q1' }, operationName: 'A' }, direct: true },
    { name: 'a field error (NOT_FOUND)', body: { query: '{ queue(name: "nope") { name } }' }, direct: true },
    { name: 'a field error, graphql-response+json', body: { query: '{ queue(name: "nope") { name } }' }, headers: gr, direct: true },
    { name: 'a variable that does not coerce', body: { query: 'query($n: String!) { queue(name: $n) { name } }', variables: { n: 5 } }, headers: gr, direct: true },
    { name: 'a missing variable', body: { query: 'query($n: String!) { queue(name: $n) { name } }' }, direct: true },
    { name: 'a bad input in a mutation (nothing changes)', body: { query: 'mutation { createQueue(input: { name: "bad name!", rate: 1 }) { name } }' }, headers: gr, direct: true },
    { name: 'a mutation that conflicts', body: { query: 'mutation { createQueue(input: { name: "q1", rate: 1 }) { name } }' }, headers: gr, direct: true },
    { name: 'over GRAPHQL_MAX_DEPTH (a guard refusal)', body: { query: '{ person(oid: "1") { organizations { organization { members { person { oid } } } } } }' }, headers: gr, direct: true },
    { name: 'extensions and null operationName', body: { query: '{ queues(first: 2) { totalCount } }', extensions: {}, operationName: null, variables: null }, direct: true },
    { name: 'a syntax error', body: { query: '{ queue(name: "q1") { name }' }, direct: true },
    { name: 'a validation error', body: { query: '{ queue(name: "q1") { nope } }' }, headers: gr, direct: true },
    { name: 'an unknown operationName', body: { query: 'query A { queues(first: 1) { totalCount } }', operationName: 'B' }, direct: true },
    { name: 'two operations, none named', body: { query: 'query A { queues(first: 1) { totalCount } } query B { queues(first: 1) { totalCount } }' }, direct: true },
    { name: 'a subscription', body: { query: 'subscription { queueChanged(name: "q1") { name } }' }, headers: gr, direct: true },
    { name: 'variables that are not an object', body: { query: '{ queues(first: 1) { totalCount } }', variables: [1] }, direct: true },
    { name: 'a query that is not a string', body: { query: 5 }, direct: true },
    { name: 'an Accept Yoga answers with SSE', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { accept: 'text/event-stream' }, direct: false },
    { name: 'Content-Type in capitals', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { 'content-type': 'Application/JSON' }, direct: true },
    { name: 'an empty operationName', body: { query: '{ queues(first: 1) { totalCount } }', operationName: '' }, direct: true },
    { name: '@skip with a null variable', body: { query: 'query($s: Boolean) { queues(first: 1) { totalCount @skip(if: $s) } }', variables: { s: null } }, direct: true },
    { name: 'an unknown parameter set to null', body: { query: '{ queues(first: 1) { totalCount } }', other: null }, direct: true },
    { name: 'an unknown parameter', body: { query: '{ queues(first: 1) { totalCount } }', other: 1 }, direct: true },
    { name: 'an Accept nothing matches (406)', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { accept: 'text/html' }, direct: false },
  ];
  it.each(cases)('$name: the same answer as Yoga', async (c) => {
    await compare(t, c);
  });

  it('a body sent in chunks (no length) keeps its request id and access line, on either edge', async () => {
    for (const url of [t.url, t.viaYoga]) {
      const res = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'chunked-1' },
        body: new Blob(['{"query":"{ queues(first: 1) { totalCount } }"}']).stream(),
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('chunked-1');
      expect(await res.json()).toEqual({ data: { queues: { totalCount: 1 } } });
    }
  });

  it('invalid JSON is answered alike', async () => {
    for (const url of [t.url, t.viaYoga]) {
      const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { errors: { message: string }[] }).errors[0]!.message).toBe('POST body sent invalid JSON.');
    }
  });
});

describe('direct door for /graphql (AUTH=on)', () => {
  let t: Awaited<ReturnType<typeof startObserved>>;
  let reader: string;
  beforeAll(async () => {
    t = await startObserved({ AUTH: 'on' });
    reader = await makeKey(t, ['queues:read']);
  });
  afterAll(async () => t?.close());

  it.each<Case>([
    { name: 'no key (401 before the parameters are read)', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { accept: 'application/graphql-response+json' }, direct: true },
    { name: 'an unknown key', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { authorization: 'Bearer nope' }, direct: true },
  ])('$name: the same answer as Yoga', async (c) => {
    const answer = await compare(t, c);
    expect(answer.status).toBe(401);
  });

  it('a key with the scope reads; one without it is refused 403, as by Yoga', async () => {
    const read = await compare(t, { name: 'read', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: bearer(reader), direct: true });
    expect(read.status).toBe(200);
    const write = await compare(t, {
      name: 'write',
      body: { query: 'mutation { createQueue(input: { name: "w", rate: 1 }) { name } }' },
      headers: { ...bearer(reader), accept: 'application/graphql-response+json' },
      direct: true,
    });
    expect(write.status).toBe(403);
  });
});

describe('the JSON answer type, as Yoga negotiates it', () => {
  const yoga = createYoga({ schema: createSchema({ typeDefs: 'type Query { a: Int }', resolvers: { Query: { a: () => 1 } } }), logging: false });
  it.each([
    null,
    '',
    '*/*',
    'application/json',
    'application/graphql-response+json',
    'application/json, application/graphql-response+json',
    'application/graphql-response+json, application/json',
    'application/*',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'application/graphql-response+json;charset=latin1, application/json',
    'text/event-stream',
    'text/event-stream, application/json',
    'multipart/mixed',
    'text/html',
    'APPLICATION/JSON',
    'application/json;q=0.1, text/event-stream',
  ])('Accept %j', async (accept) => {
    const res = await yoga.fetch('http://localhost/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...(accept !== null && { accept }) }, body: '{"query":"{ a }"}' });
    const yogaType = res.headers.get('content-type')?.split(';')[0];
    const json = yogaType === 'application/json' || yogaType === 'application/graphql-response+json' ? yogaType : undefined;
    expect(jsonAnswerType(accept)).toBe(json);
  });
});
