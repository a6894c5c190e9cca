import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchema, createYoga } from 'graphql-yoga';
import type { TestGateway } from './helpers/gateway.js';
import { freshDatabase } from './helpers/databases.js';
import { bearer, makeKey } from './helpers/keys.js';
import { jsonAnswerType } from '../src/graphql/plugins/use-direct-graphql.js';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';

// Common JSON POSTs to /graphql run on the operation runner instead of Yoga's envelop (src/graphql/plugins/
// use-direct-graphql.ts). Each request of the table is sent twice: as it is, and with a `"yoga": null` parameter,
// which Yoga ignores and the direct door hands on, so the second answer is Yoga's own. They must be the same, and
// only the second may reach Yoga's envelop (counted by Yoga's own debug line for every request whose parameters it reads).

interface Case {
  name: string;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
  /** Whether the direct door answers it (false: it goes on to Yoga even as sent). */
  direct: boolean;
  /** Answered before either door reads the parameters (AUTH=on without a valid key: accessControl.keyFirst). */
  beforeParams?: boolean;
}

async function answerOf(t: TestGateway, body: Record<string, unknown>, headers: Record<string, string>) {
  const res = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
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

/** A gateway whose log is read: `enveloped()` counts the requests whose parameters Yoga processed. */
async function startObserved(env: Record<string, string>): Promise<TestGateway & { enveloped(): number }> {
  let processed = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      processed += chunk.toString().split('Parsing request to extract GraphQL parameters"').length - 1;
      done();
    },
  });
  const db = await freshDatabase('pglite');
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', AUTH: 'off', ...db.env, ...env });
  const gateway = await startGateway(config, { log: pino({ level: 'debug' }, sink) });
  return {
    gateway,
    url: gateway.url,
    db,
    enveloped: () => processed,
    async close() {
      await gateway.close();
      await db.drop();
    },
  };
}

async function compare(t: TestGateway, enveloped: () => number, c: Case) {
  const before = enveloped();
  const direct = await answerOf(t, c.body, c.headers ?? {});
  const viaDirect = enveloped() === before;
  const yoga = await answerOf(t, { ...c.body, yoga: null }, c.headers ?? {});
  if (c.beforeParams) expect(enveloped(), 'neither request reached the parameters').toBe(before);
  else expect(enveloped(), 'the reference request went through Yoga').toBeGreaterThan(before);
  if (!c.beforeParams) expect(viaDirect, 'answered by the direct door').toBe(c.direct);
  expect(direct).toEqual(yoga);
  return direct;
}

describe('direct door for /graphql (AUTH=off)', () => {
  let t: TestGateway;
  let enveloped: () => number;
  beforeAll(async () => {
    const observed = await startObserved({ GRAPHQL_MAX_DEPTH: '4' });
    t = observed;
    enveloped = observed.enveloped;
    await answerOf(t, { query: 'mutation { createQueue(input: { name: "q1", rate: 2, labels: ["a"] }) { name } }' }, {});
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
    { name: 'a syntax error', body: { query: '{ queue(name: "q1") { name }' }, direct: false },
    { name: 'a validation error', body: { query: '{ queue(name: "q1") { nope } }' }, headers: gr, direct: false },
    { name: 'an unknown operationName', body: { query: 'query A { queues(first: 1) { totalCount } }', operationName: 'B' }, direct: false },
    { name: 'two operations, none named', body: { query: 'query A { queues(first: 1) { totalCount } } query B { queues(first: 1) { totalCount } }' }, direct: false },
    { name: 'a subscription', body: { query: 'subscription { queueChanged(name: "q1") { name } }' }, headers: gr, direct: false },
    { name: 'variables that are not an object', body: { query: '{ queues(first: 1) { totalCount } }', variables: [1] }, direct: false },
    { name: 'a query that is not a string', body: { query: 5 }, direct: false },
    { name: 'an Accept Yoga answers with SSE', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { accept: 'text/event-stream' }, direct: false },
    { name: 'an Accept nothing matches (406)', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { accept: 'text/html' }, direct: false },
  ];
  it.each(cases)('$name: the same answer as Yoga', async (c) => {
    await compare(t, enveloped, c);
  });

  it('a body sent in chunks (no length) keeps its request id and access line, on either door', async () => {
    for (const body of ['{"query":"{ queues(first: 1) { totalCount } }"}', '{"query":"{ queues(first: 1) { totalCount } }","yoga":null}']) {
      const res = await fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'chunked-1' },
        body: new Blob([body]).stream(),
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBe('chunked-1');
      expect(await res.json()).toEqual({ data: { queues: { totalCount: 1 } } });
    }
  });

  it('invalid JSON is answered by Yoga', async () => {
    const res = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { message: string }[] }).errors[0]!.message).toBe('POST body sent invalid JSON.');
  });
});

describe('direct door for /graphql (AUTH=on)', () => {
  let t: TestGateway;
  let enveloped: () => number;
  let reader: string;
  beforeAll(async () => {
    const observed = await startObserved({ AUTH: 'on' });
    t = observed;
    enveloped = observed.enveloped;
    reader = await makeKey(t, ['queues:read']);
  });
  afterAll(async () => t?.close());

  it.each<Case>([
    { name: 'no key (401 before the parameters are read)', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { accept: 'application/graphql-response+json' }, direct: false, beforeParams: true },
    { name: 'an unknown key', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: { authorization: 'Bearer nope' }, direct: false, beforeParams: true },
  ])('$name: the same answer as Yoga', async (c) => {
    const answer = await compare(t, enveloped, c);
    expect(answer.status).toBe(401);
  });

  it('a key with the scope reads; one without it is refused 403, as by Yoga', async () => {
    const read = await compare(t, enveloped, { name: 'read', body: { query: '{ queues(first: 1) { totalCount } }' }, headers: bearer(reader), direct: true });
    expect(read.status).toBe(200);
    const write = await compare(t, enveloped, {
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
