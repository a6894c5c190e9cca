import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DATABASES } from './helpers/databases.js';
import { gql, post, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { eventually } from './helpers/sink.js';
import { watchSubscriptions } from './helpers/subscriptions.js';
import { loadConfig } from '../src/config.js';
import { assertSystemAccess } from '../src/access/principal.js';

// API keys and scopes: one check for GraphQL, subscriptions and legacy paths (AUTH=on).

describe.each(DATABASES)('access control on %s', (kind) => {
  let t: TestGateway;
  let admin: string;
  let reader: string;
  let writer: string;
  let other: string;
  beforeAll(async () => {
    t = await startTestGateway(kind, { AUTH: 'on', RATE_LIMIT_PER_MINUTE: '0' });
    admin = await makeKey(t, ['admin:all']);
    reader = await makeKey(t, ['queues:read']);
    writer = await makeKey(t, ['queues:write', 'queues:read']);
    other = await makeKey(t, ['tasks:read']);
    await rpc(t.url, 'createQueue', { name: 'q1' }, {}, bearer(writer));
  });
  afterAll(() => t?.close());

  it('GraphQL: no key 401, unknown key 401, key without the scope 403 (naming it), right key 200', async () => {
    const q = '{ queues { totalCount } }';
    const none = await gql(t.url, q);
    expect(none.status).toBe(401);
    expect(none.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(none.errors?.[0]?.extensions?.http).toBeUndefined();
    const bogus = await gql(t.url, q, {}, bearer('gw_000000000000_' + 'A'.repeat(43)));
    expect(bogus.status).toBe(401);
    expect(bogus.errors?.[0]?.message).toContain('unknown');
    const forbidden = await gql(t.url, q, {}, bearer(other));
    expect(forbidden.status).toBe(403);
    expect(forbidden.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', requiredScopes: ['queues:read'] });
    const ok = await gql(t.url, q, {}, { 'x-api-key': reader });
    expect(ok.status).toBe(200);
    expect(ok.data).toEqual({ queues: { totalCount: 1 } });
    expect((await gql(t.url, 'mutation { openQueue(name: "q1") { name } }', {}, bearer(reader))).status).toBe(403);
    expect((await gql(t.url, 'mutation { openQueue(name: "q1") { name } }', {}, bearer(writer))).status).toBe(200);
  });

  it('checks every root field, through fragments and inline fragments; __typename needs a key but no scope', async () => {
    const viaFragment = 'query { ...F } fragment F on Query { ... on Query { apiKeys { totalCount } } }';
    expect((await gql(t.url, viaFragment, {}, bearer(reader))).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await gql(t.url, viaFragment, {}, bearer(admin))).data).toMatchObject({ apiKeys: { totalCount: 4 } });
    const mixed = await gql(t.url, '{ queues { totalCount } apiKeys { totalCount } }', {}, bearer(reader));
    expect(mixed.status).toBe(403);
    expect(mixed.data ?? null).toBeNull();
    expect((await gql(t.url, '{ __typename }')).status).toBe(401); // AUTH=on: every GraphQL request needs a key
    expect((await gql(t.url, '{ noSuchField }')).status).toBe(401); // before validation: nothing learnt anonymously
    expect((await gql(t.url, '{ __typename }', {}, bearer(other))).status).toBe(200); // no scope needed
    expect((await gql(t.url, '{ __schema { queryType { name } } }')).status).toBe(401);
    expect((await gql(t.url, '{ __schema { queryType { name } } }', {}, bearer(other))).status).toBe(200);
  });

  it('legacy JSON-RPC paths: 401 -32001 and 403 -32003 in the JSON-RPC envelope; batches stay 200', async () => {
    const none = await rpc(t.url, 'getQueue', { name: 'q1' });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001, data: { code: 'UNAUTHENTICATED' } } });
    expect(none.body.error.message).toContain('Authorization: Bearer');
    // Authentication comes before parameters: invalid params without a key are 401, not -32602.
    const badParams = await rpc(t.url, 'createQueue', { name: 42, nope: true });
    expect(badParams.status).toBe(401);
    expect((await post(t.url, '/rpc', '{not json', {})).status).toBe(401);
    const forbidden = await rpc(t.url, 'createQueue', { name: 'q2' }, {}, bearer(reader));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32003, data: { code: 'FORBIDDEN' } } });
    const ok = await rpc(t.url, 'getQueue', { name: 'q1' }, {}, { 'x-api-key': reader });
    expect(ok.body.result).toMatchObject({ name: 'q1' });
    const batch = await post(t.url, '/rpc', JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'getQueue', params: { name: 'q1' } }, { jsonrpc: '2.0', id: 2, method: 'deleteQueue', params: { name: 'q1' } }]), bearer(reader));
    expect(batch.status).toBe(200);
    expect(batch.body[0].result.name).toBe('q1');
    expect(batch.body[1].error.code).toBe(-32003);
  });

  it('creates keys with the admin mutation (secret shown once, only its hash stored), lists and revokes them', async () => {
    const created = await gql(t.url, 'mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key apiKey { id prefix scopes systemId revokedAt } } }', { i: { name: 'sms gateway', scopes: ['queues:write', 'queues:read'], systemId: 'sys-1' } }, bearer(admin));
    expect(created.status).toBe(200);
    const { key, apiKey } = created.data!.createApiKey;
    expect(key).toMatch(new RegExp(`^gw_${apiKey.prefix}_[A-Za-z0-9_-]{43}$`));
    expect(apiKey).toMatchObject({ scopes: ['queues:write', 'queues:read'], systemId: 'sys-1', revokedAt: null });
    const rows = await t.gateway.services.db.$queryRawUnsafe<Record<string, unknown>[]>('SELECT * FROM "ApiKey" WHERE id = $1', apiKey.id);
    expect(rows[0]!.hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(key.slice(16));
    const listed = await gql(t.url, '{ apiKeys(first: 50) { nodes { id prefix } } }', {}, bearer(admin));
    expect(JSON.stringify(listed.data)).not.toContain(key);
    expect((await gql(t.url, '{ queues { totalCount } }', {}, bearer(key))).status).toBe(200);
    const unknownScope = await gql(t.url, 'mutation { createApiKey(input: {name: "x", scopes: ["queues:reed"]}) { key } }', {}, bearer(admin));
    expect(unknownScope.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'scopes.0' }] });
    expect((await gql(t.url, 'mutation { createApiKey(input: {name: "x", scopes: ["admin:all"]}) { key } }', {}, bearer(writer))).status).toBe(403);
    const revoked = await gql(t.url, 'mutation($id: String!) { revokeApiKey(id: $id) { revokedAt } }', { id: apiKey.id }, bearer(admin));
    expect(revoked.data!.revokeApiKey.revokedAt).toBeTruthy();
    expect((await gql(t.url, '{ queues { totalCount } }', {}, bearer(key))).status).toBe(401);
  });

  it('server-sent events: a subscription without a key is refused in the stream (UNAUTHENTICATED), as graphql-sse clients read it', async () => {
    const { overSse } = await import('./helpers/transports.js');
    const answer = await overSse(t.url, 'subscription { queueChanged(name: "q1") { name } }');
    expect(answer.status).toBe(200);
    expect(answer.results).toEqual([{ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: 'UNAUTHENTICATED' }) })] }]);
  });

  it('graphql-ws: the key is checked at connection time (4403 without it); scopes per subscription', async () => {
    const open = (payload?: unknown, headers: Record<string, string> = {}) => {
      const ws = new WebSocket(t.url.replace('http', 'ws') + '/graphql', 'graphql-transport-ws', { headers });
      const messages: any[] = [];
      ws.on('message', (d) => messages.push(JSON.parse(String(d))));
      const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
      ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', ...(payload !== undefined && { payload }) })));
      const until = (type: string) =>
        eventually(async () => messages.find((x) => x.type === type), 2000, 10).catch(() => {
          throw new Error(`no ${type}: ${JSON.stringify(messages)}`);
        });
      return { ws, closed, until };
    };
    expect(await open().closed).toBe(4403);
    expect(await open({ authorization: 'Bearer gw_nope' }).closed).toBe(4403);
    const viaHeader = open(undefined, { 'x-api-key': reader });
    await viaHeader.until('connection_ack');
    viaHeader.ws.close(1000);
    const s = open({ authorization: `Bearer ${other}` });
    await s.until('connection_ack');
    s.ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { queueChanged(name: "q1") { name } }' } }));
    const refused = await s.until('next');
    expect(refused.payload.errors[0].extensions.code).toBe('FORBIDDEN');
    s.ws.close(1000);
    const r = open({ authorization: `Bearer ${reader}` });
    await r.until('connection_ack');
    const subscriptions = watchSubscriptions(t.gateway);
    r.ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { queueChanged(name: "q1") { name rate } }' } }));
    await subscriptions.ready('queue', 'q1');
    await rpc(t.url, 'changeQueueRate', { name: 'q1', rate: 7 }, {}, bearer(writer));
    expect((await r.until('next')).payload).toEqual({ data: { queueChanged: { name: 'q1', rate: 7 } } });
    r.ws.close(1000);
  });

  it('/metrics needs metrics:read (or admin:all) and shows requests, operations and queue gauges', async () => {
    expect((await fetch(`${t.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${t.url}/metrics`, { headers: bearer(reader) })).status).toBe(403);
    const scraper = await makeKey(t, ['metrics:read']);
    const res = await fetch(`${t.url}/metrics`, { headers: bearer(scraper) });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/gateway_http_requests_total\{method="POST",path="\/getQueue",status="200"\} \d+/);
    expect(text).toMatch(/gateway_graphql_operations_total\{type="query",field="queues",outcome="ok"\} \d+/);
    expect(text).toMatch(/gateway_graphql_operation_duration_seconds_bucket\{le="0.005",type="query",field="queues"\}/);
    expect(text).toMatch(/gateway_queues\{status="OPEN",paused="false"\} 1/);
    expect(text).toContain('gateway_rejected_total{reason="unauthenticated"}');
    expect(text).toContain('# TYPE gateway_tasks gauge');
    expect(text).toContain('# TYPE gateway_delivery_outcomes_total counter');
  });
});

describe('AUTH configuration', () => {
  it('refuses AUTH=off unless HOST is loopback; defaults to on with DATABASE_URL, off without', () => {
    expect(() => loadConfig({ AUTH: 'off', HOST: '0.0.0.0' })).toThrow(/AUTH: "off" is allowed only when HOST is a loopback address/);
    expect(() => loadConfig({ HOST: '10.1.2.3' })).toThrow(/loopback/);
    expect(loadConfig({ AUTH: 'off', HOST: '::1' }).AUTH).toBe('off');
    expect(loadConfig({ AUTH: 'off', HOST: '127.0.0.5' }).AUTH).toBe('off');
    expect(loadConfig({ AUTH: 'off', HOST: 'localhost' }).AUTH).toBe('off');
    expect(loadConfig({}).AUTH).toBe('off');
    expect(loadConfig({ DATABASE_URL: 'postgresql://x@h/db', HOST: '0.0.0.0' }).AUTH).toBe('on');
    expect(loadConfig({ HOST: '0.0.0.0', AUTH: 'on' }).AUTH).toBe('on');
  });

  it('assertSystemAccess: a key bound to a system acts only for that system', () => {
    const ctx = (systemId: string | null, scopes = ['notifications:send']) => ({ config: { AUTH: 'on' as const }, principal: { kind: 'key' as const, id: 'k', name: 'n', scopes, systemId, idpConsent: null, personOid: null, expiresAt: null } });
    expect(() => assertSystemAccess(ctx('sys-1'), 'sys-1')).not.toThrow();
    expect(() => assertSystemAccess(ctx('sys-1'), 'sys-2')).toThrow(/bound to system "sys-1"/);
    expect(() => assertSystemAccess(ctx(null), 'sys-2')).not.toThrow();
    expect(() => assertSystemAccess(ctx('sys-1', ['admin:all']), 'sys-2')).not.toThrow();
    expect(() => assertSystemAccess({ config: { AUTH: 'on' }, principal: null }, 'sys-1')).toThrow(/API key/);
    expect(() => assertSystemAccess({ config: { AUTH: 'off' }, principal: null }, 'sys-1')).not.toThrow();
  });
});
