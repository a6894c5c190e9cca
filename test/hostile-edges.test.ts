import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importIdentity } from '../src/identity/import.js';
import { DATABASES } from './helpers/databases.js';
import { post, rpc, startTestGateway, type TestGateway, NO_WORKERS } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { identityFixture, WIDE } from './helpers/identity-fixture.js';
import { overHttp, overSse, overWs, rawRequest, type TransportAnswer } from './helpers/transports.js';

// What a hostile client tried, as a table run on every transport it concerns: personal data filtered by
// X-IdpScopes alike on HTTP, SSE and graphql-ws; batches capped (and never holding the process: healthz-under-batch);
// input the database would refuse answered as the client's mistake, changing nothing.

const PERSON = 'query($oid: String!) { person(oid: $oid) { oid firstName snils inn birthDate } }';
const PERSON_ORGS = 'query($oid: String!) { person(oid: $oid) { oid organizations { chief } } }';

type Transport = (url: string, query: string, variables: Record<string, unknown>, scopes: string | undefined) => Promise<TransportAnswer>;
const scopeHeader = (scopes: string | undefined): Record<string, string> => (scopes === undefined ? {} : { 'x-idpscopes': scopes });
const TRANSPORTS: [string, Transport][] = [
  ['HTTP', (url, q, v, s) => overHttp(url, q, v, scopeHeader(s))],
  ['SSE', (url, q, v, s) => overSse(url, q, v, scopeHeader(s))],
  ['graphql-ws (upgrade header)', (url, q, v, s) => overWs(url, q, v, { headers: scopeHeader(s) })],
  ['graphql-ws (connection_init)', (url, q, v, s) => overWs(url, q, v, { init: scopeHeader(s) })],
];

describe.each(DATABASES)('hostile edges on %s', (kind) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(kind, { MAX_BATCH_CALLS: '100', SCHEDULER: 'off', DELIVERY_WORKER: 'off' });
    await importIdentity(t.gateway.services.db, identityFixture());
  });
  afterAll(() => t?.close());

  describe.each(TRANSPORTS)('X-IdpScopes over %s', (_name, run) => {
    it('no scopes sent: every field; fullname: names only, snils/inn/birthDate withheld, organizations refused; unknown scope refused', async () => {
      const all = await run(t.url, PERSON, { oid: WIDE }, undefined);
      expect(all.results[0]?.data?.person).toEqual({ oid: WIDE, firstName: 'Pavel', snils: '111-222-333 44', inn: '770000000001', birthDate: '01.01.1980' });
      const named = await run(t.url, PERSON, { oid: WIDE }, 'fullname');
      expect(named.results[0]?.data?.person).toEqual({ oid: WIDE, firstName: 'Pavel', snils: null, inn: null, birthDate: null });
      const orgs = await run(t.url, PERSON_ORGS, { oid: WIDE }, 'fullname');
      expect(orgs.results[0]?.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect(JSON.stringify(orgs.results[0]?.data ?? null)).not.toContain('chief');
      const unknown = await run(t.url, PERSON, { oid: WIDE }, 'fullname passport');
      if (unknown.closeCode !== undefined) {
        expect(unknown.closeCode).toBe(4400);
        expect(unknown.closeReason).toContain('passport');
      } else {
        expect(unknown.results[0]?.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      }
      expect(JSON.stringify(unknown.results)).not.toContain('111-222');
    });
  });

  it('X-IdpScopes sent twice is refused on every door (400 in its envelope, ws 4400), never added up; one comma list is the documented form', async () => {
    const twice = { 'x-idpscopes': ['fullname', 'snils'] as unknown as string };
    const json = { 'content-type': 'application/json' };
    const sameOrigin = { origin: t.url }; // an Origin takes a legacy call through Yoga instead of the node:http door
    const leaked = (body: string) => expect(body).not.toMatch(/111-222|Pavel/);
    for (const origin of [{}, sameOrigin]) {
      const rest = await rawRequest(t.url, `/api/data/getPersonById?oid=${WIDE}`, { headers: { ...twice, ...origin } });
      expect(rest.status).toBe(400);
      expect(JSON.parse(rest.body)).toMatchObject({ error: { status: 400, code: 'BAD_REQUEST', fields: [{ field: 'X-IdpScopes' }] } });
      leaked(rest.body);
      const call = await rawRequest(t.url, '/getQueue', { method: 'POST', headers: { ...twice, ...json, ...origin }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getQueue', params: { name: 'x' } }) });
      expect(call.status).toBe(400);
      expect(JSON.parse(call.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'BAD_REQUEST', fields: [{ field: 'X-IdpScopes' }] } } });
    }
    const body = JSON.stringify({ query: PERSON, variables: { oid: WIDE } });
    const post = await rawRequest(t.url, '/graphql', { method: 'POST', headers: { ...twice, ...json }, body });
    expect(post.status).toBe(400);
    expect(JSON.parse(post.body).errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'X-IdpScopes' }] });
    leaked(post.body);
    const get = await rawRequest(t.url, `/graphql?query=${encodeURIComponent(PERSON)}&variables=${encodeURIComponent(JSON.stringify({ oid: WIDE }))}`, { headers: twice });
    expect(get.status).toBe(400);
    expect(JSON.parse(get.body).errors[0].extensions.code).toBe('BAD_REQUEST');
    leaked(get.body);
    const sse = await rawRequest(t.url, '/graphql', { method: 'POST', headers: { ...twice, ...json, accept: 'text/event-stream' }, body });
    expect(sse.status).toBe(200);
    expect(sse.body).toMatch(/event: next\ndata: \{"errors":\[\{"message":"Bad request: X-IdpScopes was sent 2 times[^\n]*"code":"BAD_REQUEST"/);
    leaked(sse.body);
    const upgrade = await overWs(t.url, PERSON, { oid: WIDE }, { headers: twice });
    expect(upgrade.closeCode).toBe(4400);
    expect(upgrade.closeReason).toContain('X-IdpScopes was sent 2 times');
    const payload = await overWs(t.url, PERSON, { oid: WIDE }, { init: { 'x-idpscopes': 'fullname', 'X-IdpScopes': 'snils' } });
    expect(payload.closeCode).toBe(4400);
    expect(JSON.stringify(upgrade.results) + JSON.stringify(payload.results)).not.toMatch(/111-222|Pavel/);
    // One header listing both scopes (the documented form) releases both, on the node:http door and on Yoga's.
    const listed = await rawRequest(t.url, `/api/data/getPersonById?oid=${WIDE}`, { headers: { 'x-idpscopes': 'fullname, snils' } });
    expect(JSON.parse(listed.body)).toMatchObject({ firstName: 'Pavel', snils: '111-222-333 44' });
    expect((await overHttp(t.url, PERSON, { oid: WIDE }, { 'x-idpscopes': 'fullname,snils' })).results[0]!.data.person).toMatchObject({ firstName: 'Pavel', snils: '111-222-333 44', inn: null });
  });

  it('an operation whose caller has no known X-IdpScopes gets no identity data', async () => {
    const { execute, contextFactory, parse, schema } = t.gateway.yoga.getEnveloped({});
    const result = await execute({ schema, document: parse(PERSON), variableValues: { oid: WIDE }, contextValue: await contextFactory() });
    expect(JSON.stringify(result)).not.toContain('111-222');
    expect((result as { errors?: { extensions?: { code?: string } }[] }).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('a /rpc batch over MAX_BATCH_CALLS is refused whole with -32600 naming the cap; nothing of it runs', async () => {
    const calls = (n: number, method = 'createQueue') => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method, params: { name: `batch-${n}-${i}` } }));
    const over = await post(t.url, '/rpc', JSON.stringify(calls(101)));
    expect(over.status).toBe(200);
    expect(over.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { maxBatchCalls: 100 } } });
    expect(over.body.error.message).toContain('at most 100 calls');
    expect((await rpc(t.url, 'getQueue', { name: 'batch-101-0' })).body.error.code).toBe(-32004);
    const huge = await post(t.url, '/rpc', JSON.stringify(calls(5000, 'listQueues')));
    expect(huge.body.error.code).toBe(-32600);
  });

  it('NUL characters and instants the database cannot store are 400 / -32602 naming the field, and change nothing', async () => {
    await rpc(t.url, 'createQueue', { name: 'nul' });
    const rpcPayload = await rpc(t.url, 'createTask', { queueName: 'nul', name: 'a', target: { url: 'http://example.test/' }, payload: { text: 'x\u0000y' } });
    expect(rpcPayload.status).toBe(200);
    expect(rpcPayload.body.error).toMatchObject({ code: -32602, data: { fields: [{ field: 'params.payload.text', message: expect.stringContaining('NUL') }] } });
    const rpcTime = await rpc(t.url, 'createTask', { queueName: 'nul', name: 'b', target: { url: 'http://example.test/' }, scheduleTime: '+275760-09-13T00:00:00Z' });
    expect(rpcTime.body.error).toMatchObject({ code: -32602, data: { fields: [{ field: 'params.scheduleTime' }] } });
    const mutation = 'mutation($i: CreateTaskInput!) { createTask(input: $i) { name } }';
    const gqlPayload = await overHttp(t.url, mutation, { i: { queueName: 'nul', name: 'c', target: { url: 'http://example.test/' }, payload: { ['k\u0000']: 1 } } });
    expect(gqlPayload.status).toBe(400);
    expect(gqlPayload.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'i.payload.k\u0000' }] });
    const gqlTime = await overHttp(t.url, mutation, { i: { queueName: 'nul', name: 'd', target: { url: 'http://example.test/' }, scheduleTime: '+275760-09-13T00:00:00Z' } });
    expect(gqlTime.status).toBe(400);
    expect(gqlTime.results[0]!.errors![0]!.extensions?.code).toBe('BAD_USER_INPUT');
    const literal = await overHttp(t.url, 'mutation { createQueue(input: {name: "lit", description: "a\\u0000b"}) { name } }');
    expect(literal.status).toBe(400);
    expect(literal.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'input' }] });
    const overWsAnswer = await overWs(t.url, mutation, { i: { queueName: 'nul', name: 'e', target: { url: 'http://example.test/' }, description: 'a\u0000' } });
    expect(overWsAnswer.results[0]!.errors![0]!.extensions?.code).toBe('BAD_USER_INPUT');
    const webhook = await post(t.url, '/v1/systems/sys-nul/webhook', JSON.stringify({ url: 'http://example.test/hook', method: 'POST', body: { note: 'a\u0000b' } }));
    expect(webhook.status).toBe(400);
    expect(webhook.body).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', fields: [{ field: 'body.body.note', message: expect.stringContaining('NUL') }] });
    const stub = await fetch(`${t.url}/v1/type/a%00b`);
    expect(stub.status).toBe(400);
    expect((await rpc(t.url, 'getTasksSummary', { queueName: 'nul' })).body.result.total).toBe(0);
    expect((await rpc(t.url, 'getQueue', { name: 'lit' })).body.error.code).toBe(-32004);
  });
});

describe('refusals reach every client with their details (AUTH=on)', () => {
  let t: TestGateway;
  let narrowKey: string;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { AUTH: 'on', ...NO_WORKERS });
    const { createApiKey } = await import('../src/access/api-keys.js');
    ({ key: narrowKey } = await createApiKey(t.gateway.services.db, { name: 'narrow', scopes: ['tasks:read'] }));
  });
  afterAll(() => t?.close());

  const SUBSCRIPTION = 'subscription { queueChanged(name: "q") { name } }';

  async function overGraphqlSse(headers: Record<string, string>, request: { query: string; operationName?: string } = { query: SUBSCRIPTION }) {
    const { createClient } = await import('graphql-sse');
    const client = createClient({ url: `${t.url}/graphql`, headers, retryAttempts: 0 });
    const seen: { next: unknown[]; error?: unknown; completed: boolean } = { next: [], completed: false };
    await new Promise<void>((resolve) => {
      client.subscribe(request, { next: (v) => void seen.next.push(v), error: (e) => ((seen.error = e), resolve()), complete: () => ((seen.completed = true), resolve()) });
    });
    client.dispose();
    return seen;
  }

  it('the graphql-sse client sees UNAUTHENTICATED and FORBIDDEN with requiredScopes, as graphql-ws clients do', async () => {
    const anonymous = await overGraphqlSse({});
    expect(anonymous.error).toBeUndefined();
    expect(anonymous.next).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })] }]);
    const narrow = await overGraphqlSse({ authorization: `Bearer ${narrowKey}` });
    expect(narrow.error).toBeUndefined();
    expect(narrow.next).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'FORBIDDEN', requiredScopes: ['queues:read'] }) })] }]);
    const ws = await overWs(t.url, SUBSCRIPTION, {}, { init: { authorization: `Bearer ${narrowKey}` } });
    expect(ws.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', requiredScopes: ['queues:read'] });
    // Plain HTTP keeps its statuses.
    expect((await overHttp(t.url, '{ queues { totalCount } }', {}, { authorization: `Bearer ${narrowKey}` })).status).toBe(403);
    expect((await overHttp(t.url, '{ queues { totalCount } }')).status).toBe(401);
  });

  it('a request Yoga cannot resolve to one operation (400 over HTTP) reaches the graphql-sse client in the stream, not as a network error', async () => {
    const key = { authorization: `Bearer ${narrowKey}` };
    for (const request of [{ query: 'query A { __typename } query B { __typename }' }, { query: 'query A { __typename }', operationName: 'C' }]) {
      // The client reads events only from a 2xx answer: any other status would be its NetworkError.
      const seen = await overGraphqlSse(key, request);
      expect(seen.error).toBeUndefined();
      expect(seen.completed).toBe(true);
      expect(seen.next).toEqual([{ errors: [expect.objectContaining({ message: 'Could not determine what operation to execute.', extensions: { code: 'OPERATION_RESOLUTION_FAILURE' } })] }]);
      const http = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { ...key, 'content-type': 'application/json' }, body: JSON.stringify(request) });
      expect(http.status).toBe(400);
    }
  });
});

describe('what a web page can make the default set-up do (embedded database, AUTH=off)', () => {
  let t: TestGateway;
  let open: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { ...NO_WORKERS });
    open = await startTestGateway('pglite', { CORS_ORIGINS: 'https://app.example, https://admin.example:8443', ...NO_WORKERS });
  });
  afterAll(async () => {
    await t?.close();
    await open?.close();
  });

  const json = { 'content-type': 'application/json' };
  const doors = [
    { name: 'GraphQL', path: '/graphql', body: JSON.stringify({ query: 'mutation { createQueue(input: {name: "web"}) { name } }' }) },
    { name: 'JSON-RPC path', path: '/createQueue', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'createQueue', params: { name: 'web' } }) },
    { name: 'JSON-RPC /rpc', path: '/rpc', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'createQueue', params: { name: 'web' } }) },
    { name: 'REST', path: '/v1/systems/web/webhook', body: JSON.stringify({ url: 'http://example.test/', method: 'POST' }) },
  ];
  const nothingCreated = async (gw: TestGateway) => {
    expect((await rpc(gw.url, 'getQueue', { name: 'web' })).body.error.code).toBe(-32004);
    expect((await fetch(`${gw.url}/v1/type/webhook`).then((r) => r.json())) as { totalElements: number }).toMatchObject({ totalElements: 0 });
  };

  it.each(doors)('$name: a foreign Origin is refused (403, no CORS headers) and a rebinding Host is refused (421)', async ({ path, body }) => {
    const foreign = await rawRequest(t.url, path, { method: 'POST', headers: { ...json, origin: 'https://evil.example' }, body });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).errors[0].extensions.code).toBe('FORBIDDEN_ORIGIN');
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    expect(foreign.headers['access-control-allow-credentials']).toBeUndefined();
    const nullOrigin = await rawRequest(t.url, path, { method: 'POST', headers: { ...json, origin: 'null' }, body });
    expect(nullOrigin.status).toBe(403);
    const rebound = await rawRequest(t.url, path, { method: 'POST', headers: { ...json, host: `evil.example:${t.gateway.port}` }, body });
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body).errors[0].extensions.code).toBe('MISDIRECTED_REQUEST');
    await nothingCreated(t);
  });

  it.each(doors)('$name: simple-request bodies (text/plain, form-encoded, multipart) change nothing', async ({ name, path, body }) => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const payload = type.startsWith('application/x-www') && name === 'GraphQL' ? `query=${encodeURIComponent('mutation { createQueue(input: {name: "web"}) { name } }')}` : body;
      const res = await rawRequest(t.url, path, { method: 'POST', headers: { 'content-type': type }, body: payload });
      expect(res.status, `${type}: ${res.body}`).toBe(name === 'GraphQL' ? 403 : 415);
    }
    await nothingCreated(t);
  });

  it('GraphQL over GET runs queries only; a same-origin page (GraphiQL) and clients without an Origin are served', async () => {
    const mutation = await rawRequest(t.url, `/graphql?query=${encodeURIComponent('mutation { createQueue(input: {name: "web"}) { name } }')}`, { headers: { accept: 'application/json' } });
    expect(mutation.status).toBe(405);
    const query = await rawRequest(t.url, `/graphql?query=${encodeURIComponent('{ queues { totalCount } }')}`, { headers: { accept: 'application/json' } });
    expect(query.status).toBe(200);
    const sameOrigin = await rawRequest(t.url, '/graphql', { method: 'POST', headers: { ...json, origin: t.url }, body: JSON.stringify({ query: '{ queues { totalCount } }' }) });
    expect(sameOrigin.status).toBe(200);
    const localhost = await rawRequest(t.url, '/healthz', { headers: { host: `localhost:${t.gateway.port}` } });
    expect(localhost.status).toBe(200);
    await nothingCreated(t);
  });

  it('graphql-ws: a foreign Origin or a rebinding Host cannot open a socket', async () => {
    const foreign = await overWs(t.url, '{ queues { totalCount } }', {}, { headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(401);
    expect(foreign.results).toEqual([]);
    const rebound = await overWs(t.url, '{ queues { totalCount } }', {}, { headers: { host: 'evil.example' } });
    expect(rebound.status).toBe(401);
    const same = await overWs(t.url, '{ queues { totalCount } }', {}, { headers: { origin: t.url } });
    expect(same.results[0]?.data).toEqual({ queues: { totalCount: 0 } });
  });

  it('CORS_ORIGINS opens cross-origin access to the origins it names, one at a time, and to no other', async () => {
    const preflight = await rawRequest(open.url, '/graphql', {
      method: 'OPTIONS',
      headers: { origin: 'https://admin.example:8443', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://admin.example:8443');
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('authorization');
    const allowed = await rawRequest(open.url, '/graphql', { method: 'POST', headers: { ...json, origin: 'https://app.example' }, body: JSON.stringify({ query: '{ queues { totalCount } }' }) });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(allowed.headers['access-control-allow-credentials']).toBe('true');
    const other = await rawRequest(open.url, '/graphql', { method: 'POST', headers: { ...json, origin: 'https://evil.example' }, body: JSON.stringify({ query: '{ queues { totalCount } }' }) });
    expect(other.status).toBe(403);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const otherPreflight = await rawRequest(open.url, '/graphql', { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(otherPreflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('CORS_ORIGINS must be a list of origins', async () => {
    const { loadConfig } = await import('../src/config.js');
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example/path' })).toThrow(/CORS_ORIGINS.*not an origin/);
    expect(() => loadConfig({ CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS/);
  });
});

describe('the rate limit holds across processes (PostgreSQL) and counts a batch as its calls', () => {
  it('two gateways on one database accept 20 operations a minute for one key in total; a batch of 25 gets 20 answers and 5 refusals', async () => {
    const { freshDatabase } = await import('./helpers/databases.js');
    const { loadConfig } = await import('../src/config.js');
    const { startGateway } = await import('../src/app.js');
    const { createApiKey } = await import('../src/access/api-keys.js');
    const { pino } = await import('pino');
    const db = await freshDatabase('postgres');
    const env = { ...db.env, PORT: '0', HOST: '127.0.0.1', AUTH: 'on', RATE_LIMIT_PER_MINUTE: '20', ...NO_WORKERS };
    const a = await startGateway(loadConfig(env), { log: pino({ level: 'silent' }) });
    const b = await startGateway(loadConfig(env), { log: pino({ level: 'silent' }) });
    try {
      const { key } = await createApiKey(a.services.db, { name: 'shared', scopes: ['queues:read'] });
      const { key: other } = await createApiKey(a.services.db, { name: 'batch', scopes: ['queues:read'] });
      const headers = { authorization: `Bearer ${key}` };
      const statuses: number[] = [];
      const startedAt = Date.now();
      for (let i = 0; i < 60; i++) statuses.push((await rpc(i % 2 ? a.url : b.url, 'listQueues', {}, {}, headers)).status);
      const accepted = statuses.filter((s) => s === 200).length;
      // Each process leases tokens and spends them without the database; together they get the bucket's 20 and the
      // tokens it refilled during the run (one every 3 s), never more.
      expect(accepted).toBeGreaterThanOrEqual(20);
      expect(accepted).toBeLessThanOrEqual(20 + Math.floor((Date.now() - startedAt) / 3000));
      expect(statuses.filter((s) => s === 429).length).toBe(60 - accepted);
      const graphql = await overHttp(b.url, '{ queues { totalCount } }', {}, headers);
      expect(graphql.status).toBe(429);
      expect(graphql.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) });

      const batch = Array.from({ length: 25 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'listQueues' }));
      const answered = await post(a.url, '/rpc', JSON.stringify(batch), { authorization: `Bearer ${other}` });
      const codes = (answered.body as { error?: { code: number } }[]).map((x) => x.error?.code ?? 'ok');
      expect(codes.filter((c) => c === 'ok').length).toBe(20);
      expect(codes.filter((c) => c === -32029).length).toBe(5);
    } finally {
      await a.close();
      await b.close();
      await db.drop();
    }
  }, 60_000);
});

describe('outbound calls for user-supplied URLs reach public addresses only (SSRF)', () => {
  let strict: TestGateway;
  let byAddress: TestGateway;
  let byName: TestGateway;
  let sink: Awaited<ReturnType<typeof import('./helpers/task-sink.js').startTaskSink>>;
  let port: number;
  /** A name (not a literal) that resolves to loopback on this machine: its host name, via /etc/hosts. */
  let loopbackName: string;
  const quiet = { SCHEDULER_MAX_SLEEP_MS: '100', TASK_POLL_MS: '100', DELIVERY_POLL_MS: '100' };
  beforeAll(async () => {
    const { startTaskSink } = await import('./helpers/task-sink.js');
    const { hostname } = await import('node:os');
    const { lookup } = await import('node:dns/promises');
    sink = await startTaskSink();
    port = Number(new URL(sink.url).port);
    loopbackName = hostname();
    expect((await lookup(loopbackName)).address, `${loopbackName} must resolve to loopback for this test`).toMatch(/^127\./);
    strict = await startTestGateway('pglite', { ...quiet, OUTBOUND_ALLOW: '' });
    byAddress = await startTestGateway('pglite', { ...quiet, OUTBOUND_ALLOW: '127.0.0.0/8' });
    byName = await startTestGateway('pglite', { ...quiet, OUTBOUND_ALLOW: loopbackName });
  });
  afterAll(async () => {
    await Promise.all([strict?.close(), byAddress?.close(), byName?.close()]);
    await sink?.close();
  });

  const LITERALS = [
    ['127.0.0.1', 'loopback'],
    ['localhost', 'loopback name'],
    ['localhost.', 'loopback name'],
    ['[::1]', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['2130706433', 'loopback'],
    ['127.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['10.1.2.3', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['[fd00::1]', 'unique-local'],
    ['[fe80::1]', 'link-local'],
    ['224.0.0.1', 'multicast'],
  ] as const;

  it.each(LITERALS)('%s is refused where the URL is given, naming the rule (task, job, webhook, chat settings)', async (host, rule) => {
    const target = `http://${host}:${port}/ssrf`;
    await rpc(strict.url, 'createQueue', { name: 'ssrf' });
    const task = await rpc(strict.url, 'createTask', { queueName: 'ssrf', name: 't', target: { url: target } });
    expect(task.body.error).toMatchObject({ code: -32602, data: { fields: [{ field: 'target.url', message: expect.stringContaining(rule) }] } });
    expect(task.body.error.data.fields[0].message).toContain('OUTBOUND_ALLOW');
    const job = await rpc(strict.url, 'create', { name: 'ssrf.job', schedule: '0 0 1 1 *', target: { http: { url: target } } });
    expect(job.body.error).toMatchObject({ code: -32602, data: { fields: [{ field: 'target.http.url' }] } });
    const viaTemplate = await rpc(strict.url, 'create', { name: 'ssrf.tpl', schedule: '0 0 1 1 *', target: { task: { queue: 'ssrf', template: { target: { url: target } } } } });
    expect(viaTemplate.body.error).toMatchObject({ code: -32602, data: { fields: [{ field: 'target.task.template.target.url' }] } });
    const webhook = await post(strict.url, '/v1/systems/ssrf/webhook', JSON.stringify({ url: target, method: 'POST' }));
    expect(webhook.status).toBe(400);
    expect(webhook.body.fields).toEqual([{ field: 'url', message: expect.stringContaining(rule) }]);
    const chat = await overHttp(strict.url, 'mutation($c: JSON!) { setSystemChannel(systemId: "ssrf", channel: CHAT_B, config: $c) { channel } }', { c: { webhookUrl: target } });
    expect(chat.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'config.webhookUrl' }] });
    expect((await rpc(strict.url, 'getTasksSummary', { queueName: 'ssrf' })).body.result.total).toBe(0);
    expect((await rpc(strict.url, 'get', { name: 'ssrf.job' })).body.error.code).toBe(-32004);
  });

  it('a name that resolves to loopback fails at connect time: the task and the job instance FAILED at once, the webhook FAILED, with the reason; the peer saw nothing', async () => {
    const target = (path: string) => `http://${loopbackName}:${port}${path}`;
    await rpc(strict.url, 'createQueue', { name: 'named' });
    const task = await rpc(strict.url, 'createTask', { queueName: 'named', name: 'n1', target: { url: target('/named-task') }, maxAttempts: 3 });
    expect(task.body.result.status).toBe('READY');
    await rpc(strict.url, 'create', { name: 'named.job', schedule: '0 0 1 1 *', target: { http: { url: target('/named-job') } }, retryConfig: { retryCount: 3 } });
    const run = await rpc(strict.url, 'run', { name: 'named.job' });
    const sent = await post(strict.url, '/v1/systems/named/webhook', JSON.stringify({ url: target('/named-hook'), method: 'POST' }));
    expect(sent.status).toBe(200);
    const failedTask = await eventually(async () => {
      const t = (await rpc(strict.url, 'getTask', { queueName: 'named', name: 'n1' })).body.result;
      return t.status === 'FAILED' ? t : null;
    });
    expect(failedTask).toMatchObject({ attempts: 1, lastError: expect.stringContaining('refused by the outbound policy') });
    const instance = await eventually(async () => (await rpc(strict.url, 'searchJobInstance', { jobName: 'named.job', status: 'FAILED' })).body.result[0]);
    expect(instance).toMatchObject({ id: run.body.result.id, attempts: 1, error: expect.stringContaining('refused by the outbound policy') });
    const unit = await eventually(async () => {
      const page = (await (await fetch(`${strict.url}/v1/type/webhook?status=FAILED`)).json()) as { content: { recipient: string; lastError?: string }[] };
      return page.content.find((n) => n.recipient.includes('/named-hook'));
    });
    expect(JSON.stringify(unit)).toContain('refused by the outbound policy');
    expect(sink.hits.filter((h) => h.path.startsWith('/named'))).toEqual([]);
  });

  it.each([
    ['an address or CIDR', () => byAddress, () => `http://127.0.0.1:${port}`],
    ['a host name', () => byName, () => `http://${loopbackName}:${port}`],
  ])('OUTBOUND_ALLOW naming %s lets tasks, jobs and webhooks reach the same peer', async (_what, gateway, base) => {
    const gw = gateway();
    const tag = _what.replace(/\W/g, '');
    await rpc(gw.url, 'createQueue', { name: 'allowed' });
    await rpc(gw.url, 'createTask', { queueName: 'allowed', name: `t-${tag}`, target: { url: `${base()}/ok-task-${tag}` } });
    await rpc(gw.url, 'create', { name: `job.${tag}`, schedule: '0 0 1 1 *', target: { http: { url: `${base()}/ok-job-${tag}` } } });
    await rpc(gw.url, 'run', { name: `job.${tag}` });
    expect((await post(gw.url, '/v1/systems/allowed/webhook', JSON.stringify({ url: `${base()}/ok-hook-${tag}`, method: 'POST' }))).status).toBe(200);
    await eventually(async () => ['task', 'job', 'hook'].every((k) => sink.hits.some((h) => h.path.startsWith(`/ok-${k}-${tag}`) && h.status === 200)));
    // The allow-list opens what it names, no more.
    const other = await rpc(gw.url, 'createTask', { queueName: 'allowed', name: `o-${tag}`, target: { url: 'http://10.0.0.1/' } });
    expect(other.body.error.code).toBe(-32602);
  });

  it('OUTBOUND_ALLOW must list hosts, addresses or CIDRs', async () => {
    const { loadConfig } = await import('../src/config.js');
    expect(() => loadConfig({ OUTBOUND_ALLOW: 'http://x.example/' })).toThrow(/OUTBOUND_ALLOW/);
    expect(loadConfig({ OUTBOUND_ALLOW: '10.0.0.0/8, intranet.example ::1' }).OUTBOUND_ALLOW).toEqual(['10.0.0.0/8', 'intranet.example', '::1']);
  });
});

describe('graphql-ws message size', () => {
  it('a message larger than MAX_BODY_BYTES closes the socket with 1009 before it is parsed', async () => {
    const t = await startTestGateway('pglite', { MAX_BODY_BYTES: '2048', ...NO_WORKERS });
    try {
      const { default: WebSocket } = await import('ws');
      const code = await new Promise<number>((resolve) => {
        const socket = new WebSocket(`${t.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
        socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { pad: 'x'.repeat(4096) } })));
        socket.on('close', (c) => resolve(c));
      });
      expect(code).toBe(1009);
      const small = await overWs(t.url, '{ queues { totalCount } }');
      expect(small.results[0]?.data).toEqual({ queues: { totalCount: 0 } });
    } finally {
      await t.close();
    }
  });
});
