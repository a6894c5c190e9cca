import { createHash, createHmac, createPublicKey } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { importIdentity } from '../src/identity/import.js';
import { loadConfig } from '../src/config.js';
import { TOKEN_EXPIRED_REASON } from '../src/edge/ws.js';
import { DATABASES } from './helpers/databases.js';
import { NO_WORKERS, post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { identityFixture, NARROW, WIDE } from './helpers/identity-fixture.js';
import { bearer, makeKey } from './helpers/keys.js';
import { getParams, overHttp, overSse, overWs, type TransportAnswer } from './helpers/transports.js';
import { GATEWAY_RESOURCE, OTHER_RESOURCE, signingKey, startTestProvider, type SigningKey, type TestProvider } from './helpers/oidc-provider.js';

// Bearer tokens of a real OpenID provider (oidc-provider on loopback, client credentials grant, JWT access tokens for
// the gateway's resource indicator) beside API keys: what a token may do, the same on every door (GraphQL over HTTP,
// the legacy paths and /rpc batches, SSE, graphql-ws), and the tokens the gateway must refuse. Hostile tokens are made
// here with the provider's own private key (or none), as an attacker who got hold of one would, or as a provider
// gone wrong would sign them.

const PROVIDER_CLIENTS = [
  { id: 'backend' },
  { id: 'citizen', person: WIDE },
  { id: 'sys42', system: 'sys-42' },
  { id: 'short', ttl: 2 },
];

function oidcEnv(provider: TestProvider): Record<string, string> {
  return {
    AUTH: 'on',
    ...NO_WORKERS,
    RATE_LIMIT_PER_MINUTE: '0',
    OIDC_ISSUER: provider.issuer,
    OIDC_AUDIENCE: GATEWAY_RESOURCE,
    OIDC_CLOCK_TOLERANCE_SECONDS: '0',
    OIDC_PERSON_CLAIM: 'person_oid',
    OIDC_SYSTEM_CLAIM: '/https:~1~1gateway.test~1claims/system',
    // These tables send documents as text; token callers held to listed documents (the default) are tested below.
    TRUSTED_DOCUMENTS: 'off',
  };
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** A token signed with `key` (the provider's own, unless told), valid in every respect unless `claims`/`header` say otherwise. */
function craft(provider: TestProvider, key: SigningKey, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  const payload = { iss: provider.issuer, aud: GATEWAY_RESOURCE, sub: 'crafted', scope: 'queues:read', iat: now(), exp: now() + 300, ...claims };
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: key.kid, ...header }).sign(key.privateKey);
}

/** Header and payload as given, signed with HMAC-SHA256 under `secret` (or unsigned for alg none). */
function handMade(header: Record<string, unknown>, payload: Record<string, unknown>, secret?: string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${secret === undefined ? '' : createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** Reads the gateway's answer to a token over HTTP: status, RFC 6750 challenge and message. */
async function httpRefusal(url: string, token: string) {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }),
  });
  const body = (await res.json()) as { errors?: { message: string; extensions: { code: string } }[] };
  return { status: res.status, challenge: res.headers.get('www-authenticate'), code: body.errors?.[0]?.extensions.code, message: body.errors?.[0]?.message };
}

describe.each(DATABASES)('bearer tokens on %s', (kind) => {
  let provider: TestProvider;
  let k1: SigningKey;
  let t: TestGateway;
  let adminKey: string;
  beforeAll(async () => {
    k1 = await signingKey('k1');
    provider = await startTestProvider(PROVIDER_CLIENTS, [k1]);
    t = await startTestGateway(kind, oidcEnv(provider));
    await importIdentity(t.gateway.services.db, identityFixture());
    adminKey = await makeKey(t, ['admin:all']);
    const created = await post(t.url, '/createQueue', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'createQueue', params: { name: 'q' } }), bearer(adminKey));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  it("a provider's token is a caller with the token's scopes; API keys keep working beside it", async () => {
    const token = await provider.token('backend', 'queues:read');
    const ok = await overHttp(t.url, '{ queues(first: 1) { totalCount } }', {}, bearer(token));
    expect(ok.status).toBe(200);
    expect(ok.results[0]!.data.queues.totalCount).toBe(1);
    // The token's scopes are all it has: queues:write is not among them.
    const write = await overHttp(t.url, 'mutation { createQueue(input: { name: "q2" }) { name } }', {}, bearer(token));
    expect(write.status).toBe(403);
    expect(write.results[0]!.errors![0]!.message).toBe('This token lacks the scope queues:write needed by createQueue.');
    const key = await overHttp(t.url, '{ queues(first: 1) { totalCount } }', {}, bearer(adminKey));
    expect(key.status).toBe(200);
    const keyInHeader = await overHttp(t.url, '{ queues(first: 1) { totalCount } }', {}, { 'x-api-key': adminKey });
    expect(keyInHeader.status).toBe(200);
  });

  it('403 names the missing scope in an RFC 6750 insufficient_scope challenge, on GraphQL and on a legacy path', async () => {
    const token = await provider.token('backend', 'identity:read');
    const gql = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }),
    });
    expect(gql.status).toBe(403);
    expect(gql.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="queues:read"');
    expect(((await gql.json()) as { errors: { extensions: unknown }[] }).errors[0]!.extensions).toMatchObject({ code: 'FORBIDDEN', requiredScopes: ['queues:read'] });
    const rpc = await post(t.url, '/listQueues', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'listQueues', params: {} }), bearer(token));
    expect(rpc.status).toBe(403);
    expect(rpc.body.error).toMatchObject({ code: -32003, data: { code: 'FORBIDDEN', requiredScopes: ['queues:read'] } });
    const rest = await fetch(`${t.url}/v1/type/notice`, { headers: bearer(token) });
    expect(rest.status).toBe(403);
    expect(rest.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="notifications:read"');
  });

  // Each hostile token, over HTTP: 401, WWW-Authenticate: Bearer error="invalid_token" with the reason, in the body too.
  const HOSTILE: [string, (p: TestProvider, k: SigningKey) => Promise<string>, string][] = [
    ['expired (exp in the past)', (p, k) => craft(p, k, { iat: now() - 600, exp: now() - 60 }), 'the token expired'],
    ['not yet valid (nbf in the future)', (p, k) => craft(p, k, { nbf: now() + 600 }), 'the token is not valid yet (nbf)'],
    ['from another issuer', (p, k) => craft(p, k, { iss: 'https://evil.test' }), 'the token was not issued by'],
    ['for another audience', (p, k) => craft(p, k, { aud: OTHER_RESOURCE }), 'the token is not meant for this gateway'],
    ['without exp', (p, k) => craft(p, k, { exp: undefined }), 'the token lacks the claim exp'],
    ['an ID token (typ JWT), not an access token', (p, k) => craft(p, k, {}, { typ: 'JWT' }), 'the token is not an access token'],
    ['signed by a key the provider never published', async (p) => craft(p, await signingKey('stranger')), "the token's signing key is not one of the provider's keys"],
    ['signed by a stranger under the provider key id', async (p) => craft(p, { ...(await signingKey('k1')) }), "the token's signature is not valid"],
    ['alg none', async (p) => handMade({ alg: 'none', typ: 'at+jwt', kid: 'k1' }, { iss: p.issuer, aud: GATEWAY_RESOURCE, sub: 'x', scope: 'queues:read', exp: now() + 300 }), "the token's signature algorithm is not allowed"],
    [
      'HS256 signed with the public key (PEM) as the secret',
      async (p, k) =>
        handMade({ alg: 'HS256', typ: 'at+jwt', kid: k.kid }, { iss: p.issuer, aud: GATEWAY_RESOURCE, sub: 'x', scope: 'queues:read', exp: now() + 300 }, createPublicKey({ key: k.publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString()),
      "the token's signature algorithm is not allowed",
    ],
    [
      'HS256 signed with the published JWK as the secret',
      async (p, k) => handMade({ alg: 'HS256', typ: 'at+jwt', kid: k.kid }, { iss: p.issuer, aud: GATEWAY_RESOURCE, sub: 'x', scope: 'queues:read', exp: now() + 300 }, JSON.stringify(k.publicJwk)),
      "the token's signature algorithm is not allowed",
    ],
    ['a payload changed after signing', async (p, k) => {
      const [h, , s] = (await craft(p, k)).split('.');
      return `${h}.${b64({ iss: p.issuer, aud: GATEWAY_RESOURCE, sub: 'crafted', scope: 'admin:all', exp: now() + 300 })}.${s}`;
    }, "the token's signature is not valid"],
    ['not a JWT at all', async () => 'abc.def.ghi', 'the token is malformed'],
  ];
  it.each(HOSTILE)('refuses a token %s: 401 invalid_token with the reason', async (_name, make, reason) => {
    const answer = await httpRefusal(t.url, await make(provider, k1));
    expect(answer.status).toBe(401);
    expect(answer.code).toBe('UNAUTHENTICATED');
    expect(answer.challenge).toMatch(/^Bearer error="invalid_token", error_description="[^"]+"$/);
    expect(answer.challenge).toContain(reason);
    expect(answer.message).toContain(reason);
  });

  it("refuses the provider's own tokens that are not for this gateway or no longer valid", async () => {
    const other = await httpRefusal(t.url, await provider.token('backend', 'queues:read', OTHER_RESOURCE));
    expect(other.status).toBe(401);
    expect(other.challenge).toContain('the token is not meant for this gateway');
    const short = await provider.token('short', 'queues:read');
    expect((await httpRefusal(t.url, short)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2100));
    const expired = await httpRefusal(t.url, short);
    expect(expired.status).toBe(401);
    expect(expired.challenge).toContain('the token expired');
  });

  it('a token in the query string is never read: 401 invalid_request on GraphQL, legacy paths and graphql-ws', async () => {
    const token = await provider.token('backend', 'queues:read');
    const challenge = 'Bearer error="invalid_request", error_description="a token in the query string (access_token) is not accepted; send it in the Authorization header"';
    const get = await fetch(`${t.url}/graphql?query=${encodeURIComponent('{ queues(first: 1) { totalCount } }')}&access_token=${token}`, { headers: { accept: 'application/json' } });
    expect(get.status).toBe(401);
    expect(get.headers.get('www-authenticate')).toBe(challenge);
    // Even beside a valid header: the token has been written into a URL, which logs keep.
    const both = await fetch(`${t.url}/listQueues?access_token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: '{"jsonrpc":"2.0","id":1,"method":"listQueues"}' });
    expect(both.status).toBe(401);
    expect(both.headers.get('www-authenticate')).toBe(challenge);
    const rest = await fetch(`${t.url}/api/data/getPersonById?oid=${WIDE}&access_token=${token}`);
    expect(rest.status).toBe(401);
    const closed = await new Promise<{ code: number; reason: string }>((resolve) => {
      const socket = new WebSocket(`${t.url.replace('http', 'ws')}/graphql?access_token=${token}`, 'graphql-transport-ws');
      socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: bearer(token) })));
      socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    });
    expect(closed.code).toBe(4403);
    expect(closed.reason).toContain('query string');
  });

  /**
   * One table on every door: what a caller's scopes and personal-data claims let it see. The outcome of each door is
   * read into one shape: 'ok' with the person's fields (or the queue count), or the refusal's code.
   */
  const PERSON = 'query($oid: String!) { person(oid: $oid) { firstName snils birthDate } }';
  const QUEUES = '{ queues(first: 1) { totalCount } }';
  type Outcome = string | { firstName: unknown; snils: unknown; birthDate: unknown };
  const pick = (p: Record<string, unknown>) => ({ firstName: p.firstName ?? null, snils: p.snils ?? null, birthDate: p.birthDate ?? null });
  const ofGraphQL = (a: TransportAnswer, field: 'person' | 'queues'): Outcome => {
    if (a.closeCode === 4403 || a.status === 401) return 'UNAUTHENTICATED';
    const result = a.results[0]!;
    if (result.errors?.length) return String(result.errors[0]!.extensions?.code);
    return field === 'person' ? pick(result.data.person) : 'ok';
  };
  /** Over plain HTTP a refusal is the answer's status too: 403 for FORBIDDEN, whether a guard or a resolver refused. */
  const ofHttp = (a: TransportAnswer, field: 'person' | 'queues'): Outcome => {
    const outcome = ofGraphQL(a, field);
    if (outcome === 'FORBIDDEN') expect(a.status, 'FORBIDDEN over HTTP').toBe(403);
    if (typeof outcome !== 'string' || outcome === 'ok') expect(a.status).toBe(200);
    return outcome;
  };
  const doors = {
    person: {
      http: async (oid: string, h: Record<string, string>) => ofHttp(await overHttp(t.url, PERSON, { oid }, h), 'person'),
      get: async (oid: string, h: Record<string, string>) => ofHttp(await getParams(t.url, { query: PERSON, variables: { oid } }, h), 'person'),
      sse: async (oid: string, h: Record<string, string>) => ofGraphQL(await overSse(t.url, PERSON, { oid }, h), 'person'),
      ws: async (oid: string, h: Record<string, string>) => ofGraphQL(await overWs(t.url, PERSON, { oid }, { init: h }), 'person'),
      legacy: async (oid: string, h: Record<string, string>): Promise<Outcome> => {
        const res = await fetch(`${t.url}/api/data/getPersonById?oid=${oid}`, { headers: h });
        const body = (await res.json()) as Record<string, unknown>;
        if (res.status === 401) return 'UNAUTHENTICATED';
        if (res.status === 403) {
          expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="identity:read"');
          return 'FORBIDDEN';
        }
        expect(res.status).toBe(200);
        return pick(body);
      },
    },
    queues: {
      http: async (h: Record<string, string>) => ofHttp(await overHttp(t.url, QUEUES, {}, h), 'queues'),
      sse: async (h: Record<string, string>) => ofGraphQL(await overSse(t.url, QUEUES, {}, h), 'queues'),
      ws: async (h: Record<string, string>) => ofGraphQL(await overWs(t.url, QUEUES, {}, { init: h }), 'queues'),
      legacy: async (h: Record<string, string>): Promise<Outcome> => {
        const r = await post(t.url, '/listQueues', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'listQueues', params: {} }), h);
        return r.status === 200 ? 'ok' : String(r.body.error.data.code);
      },
      batch: async (h: Record<string, string>): Promise<Outcome> => {
        const calls = [1, 2].map((id) => ({ jsonrpc: '2.0', id, method: 'listQueues', params: {} }));
        const r = await post(t.url, '/rpc', JSON.stringify(calls), h);
        if (r.status === 401) return 'UNAUTHENTICATED';
        const outcomes = (r.body as { result?: unknown; error?: { data: { code: string } } }[]).map((a) => (a.error ? a.error.data.code : 'ok'));
        expect(new Set(outcomes).size, 'both calls alike').toBe(1);
        return outcomes[0]!;
      },
    },
  };

  const PAVEL_NAME = { firstName: 'Pavel', snils: null, birthDate: null };
  const NOTHING = { firstName: null, snils: null, birthDate: null };
  type Credential = () => Promise<Record<string, string>>;
  const token = (client: string, scope: string): Credential => async () => bearer(await provider.token(client, scope));
  const withHeader = (credential: Credential, idpScopes: string): Credential => async () => ({ ...(await credential()), 'x-idpscopes': idpScopes });
  /** [row, credential, oid read, the person as every door shows it, the queues answer] */
  const TABLE: [string, Credential, string, Outcome, Outcome][] = [
    ['token: identity:read, consented to fullname', token('backend', 'identity:read fullname'), WIDE, PAVEL_NAME, 'FORBIDDEN'],
    ['the same, X-IdpScopes trying to widen it to snils and birthdate', withHeader(token('backend', 'identity:read fullname'), 'fullname snils birthdate'), WIDE, PAVEL_NAME, 'FORBIDDEN'],
    ['the same, X-IdpScopes narrowing it to a scope outside the consent', withHeader(token('backend', 'identity:read fullname'), 'birthdate'), WIDE, NOTHING, 'FORBIDDEN'],
    ['token: identity:read, no personal-data consent', token('backend', 'identity:read queues:read'), WIDE, NOTHING, 'ok'],
    ['token: queues:read only', token('backend', 'queues:read'), WIDE, 'FORBIDDEN', 'ok'],
    ['token for another resource', async () => bearer(await provider.token('backend', 'identity:read queues:read', OTHER_RESOURCE)), WIDE, 'UNAUTHENTICATED', 'UNAUTHENTICATED'],
    ['no credential', async () => ({}), WIDE, 'UNAUTHENTICATED', 'UNAUTHENTICATED'],
    ['person-bound token without identity:read, its own record', token('citizen', 'fullname snils'), WIDE, { firstName: 'Pavel', snils: '111-222-333 44', birthDate: null }, 'FORBIDDEN'],
    ['person-bound token without identity:read, another person', token('citizen', 'fullname snils'), NARROW, 'FORBIDDEN', 'FORBIDDEN'],
    ['person-bound token with identity:read, another person', token('citizen', 'identity:read fullname'), NARROW, { firstName: 'Olga', snils: null, birthDate: null }, 'FORBIDDEN'],
    ['API key with identity:read and X-IdpScopes fullname (unchanged)', async () => ({ ...bearer(await makeKey(t, ['identity:read'])), 'x-idpscopes': 'fullname' }), WIDE, PAVEL_NAME, 'FORBIDDEN'],
    ['API key with identity:read, no X-IdpScopes: no ceiling (unchanged)', async () => ({ 'x-api-key': await makeKey(t, ['identity:read', 'queues:read']) }), WIDE, { firstName: 'Pavel', snils: '111-222-333 44', birthDate: '01.01.1980' }, 'ok'],
  ];
  it.each(TABLE)('%s: the same on HTTP, SSE, graphql-ws, legacy paths and /rpc batches', async (_name, credential, oid, person, queues) => {
    const headers = await credential();
    const seen: Record<string, Outcome> = {};
    for (const [door, run] of Object.entries(doors.person)) seen[`person over ${door}`] = await run(oid, headers);
    for (const [door, run] of Object.entries(doors.queues)) seen[`queues over ${door}`] = await run(headers);
    const expected = Object.fromEntries(Object.keys(seen).map((k) => [k, k.startsWith('person') ? person : queues]));
    expect(seen).toEqual(expected);
  });

  it("a person-bound token reads its own organizations, and of their members only itself", async () => {
    const headers = bearer(await provider.token('citizen', 'fullname usr_org'));
    const mine = await overHttp(t.url, `{ organization(oid: "4000000000") { oid members { person { oid firstName } } } }`, {}, headers);
    expect(mine.results[0]!.errors).toBeUndefined();
    // NARROW is employed there too: a person-bound caller does not see it.
    expect(mine.results[0]!.data.organization.members).toEqual([{ person: { oid: WIDE, firstName: 'Pavel' } }]);
    const orgs = await fetch(`${t.url}/api/data/getPersonOrganizationsById?oid=${WIDE}`, { headers });
    expect(orgs.status).toBe(200);
    expect(((await orgs.json()) as { size: number }).size).toBe(50);
    // An organization the person is no member of is refused before it is looked up, so the answer says nothing of it.
    for (const oid of ['4999999999', '5000000000']) {
      const theirs = await overHttp(t.url, `{ organization(oid: "${oid}") { oid } }`, {}, headers);
      expect(theirs.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'FORBIDDEN', requiredScopes: ['identity:read'] });
      expect(theirs.status).toBe(403);
    }
    const other = await fetch(`${t.url}/api/data/getPersonOrganizationsById?oid=${NARROW}`, { headers });
    expect(other.status).toBe(403);
  });

  it('a system-bound token sends notifications for its own system only', async () => {
    const headers = bearer(await provider.token('sys42', 'notifications:send'));
    const body = JSON.stringify({ type: 'notice', title: 'Hello', content: 'Body' });
    expect((await post(t.url, '/v1/systems/sys-42/general', body, headers)).status).toBe(200);
    const other = await post(t.url, '/v1/systems/sys-43/general', body, headers);
    expect(other.status).toBe(403);
    expect(other.body.message).toContain('this token is bound to system "sys-42"');
    // The same refusal over GraphQL: 403 as on the legacy path, with its challenge.
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
      body: JSON.stringify({ query: 'mutation($r: JSON!) { sendNotification(channel: GENERAL, systemId: "sys-43", request: $r) { __typename } }', variables: { r: JSON.parse(body) } }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope"');
    const answer = (await res.json()) as { data: unknown; errors: { message: string; extensions: { code: string } }[] };
    expect(answer.data).toBeNull();
    expect(answer.errors[0]!.extensions.code).toBe('FORBIDDEN');
    expect(answer.errors[0]!.message).toContain('this token is bound to system "sys-42"');
  });

  it('a graphql-ws socket outliving its token is closed with 4403 when the token expires', async () => {
    const token = await provider.token('short', 'queues:read');
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    const socket = new WebSocket(`${t.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    const events: string[] = [];
    const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString(), at: Date.now() })));
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    socket.on('message', (raw) => {
      const message = JSON.parse(raw.toString()) as { type: string };
      events.push(message.type);
      if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: 'subscription { queueChanged(name: "q") { name } }' } }));
    });
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the socket outlived its token by 5 s')), (exp + 5) * 1000 - Date.now()));
    const { code, reason, at } = await Promise.race([closed, timeout]);
    socket.terminate();
    expect(events[0]).toBe('connection_ack');
    expect(events).not.toContain('complete');
    expect(code).toBe(4403);
    expect(reason).toBe(TOKEN_EXPIRED_REASON);
    // Not before the token expired (tolerance 0 here), and soon after.
    expect(at).toBeGreaterThanOrEqual(exp * 1000);
    expect(at - exp * 1000).toBeLessThan(1500);
  });
});

describe('key rotation at the provider', () => {
  let provider: TestProvider;
  let t: TestGateway;
  let k1: SigningKey;
  let k2: SigningKey;
  beforeAll(async () => {
    k1 = await signingKey('k1');
    k2 = await signingKey('k2');
    provider = await startTestProvider([{ id: 'backend' }], [k1]);
    t = await startTestGateway('pglite', { ...oidcEnv(provider), OIDC_JWKS_COOLDOWN_MS: '1000', OIDC_JWKS_CACHE_MS: '3000', AUTH_CACHE_MS: '0' });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  it('a new kid is accepted without a restart, keys are read again at most once per cooldown, a removed key is refused', async () => {
    expect((await httpRefusal(t.url, await provider.token('backend', 'queues:read'))).status).toBe(200);
    const readsBefore = provider.jwksReads();
    // Tokens naming made-up keys, all within the cooldown: the provider's keys are not read again for them.
    const stranger = await signingKey('made-up');
    for (let i = 0; i < 10; i++) expect((await httpRefusal(t.url, await craft(provider, stranger))).status).toBe(401);
    expect(provider.jwksReads() - readsBefore).toBeLessThanOrEqual(1);

    // The provider rotates: k2 signs, k1 still published. The first k2 token makes the gateway read the keys again.
    provider.rotate([k2, k1]);
    await new Promise((r) => setTimeout(r, 1100));
    const fromK2 = await provider.token('backend', 'queues:read');
    expect(JSON.parse(Buffer.from(fromK2.split('.')[0]!, 'base64url').toString()).kid).toBe('k2');
    expect((await httpRefusal(t.url, fromK2)).status).toBe(200);
    expect((await httpRefusal(t.url, await craft(provider, k1))).status).toBe(200);

    // k1 is withdrawn: once the gateway's copy of the keys is older than OIDC_JWKS_CACHE_MS, k1 tokens are refused.
    provider.rotate([k2]);
    await new Promise((r) => setTimeout(r, 3100));
    const old = await httpRefusal(t.url, await craft(provider, k1));
    expect(old.status).toBe(401);
    expect(old.challenge).toContain("the token's signing key is not one of the provider's keys");
    expect((await httpRefusal(t.url, await provider.token('backend', 'queues:read'))).status).toBe(200);
  });
});

describe('claims in a namespace, and a provider that cannot be reached', () => {
  let provider: TestProvider;
  let t: TestGateway;
  beforeAll(async () => {
    provider = await startTestProvider([{ id: 'ns', namespacedScopes: ['identity:read'], namespacedIdp: ['fullname', 'snils'] }], [await signingKey('k1')]);
    t = await startTestGateway('pglite', {
      ...oidcEnv(provider),
      OIDC_SCOPES_CLAIM: '/https:~1~1gateway.test~1claims/scopes',
      OIDC_IDP_SCOPES_CLAIM: '/https:~1~1gateway.test~1claims/idp',
    });
    await importIdentity(t.gateway.services.db, identityFixture());
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  it('reads scopes and personal-data scopes from arrays in the namespace, not from the scope claim', async () => {
    // The grant's own `scope` claim says queues:read; the namespace says identity:read with fullname and snils.
    const headers = bearer(await provider.token('ns', 'queues:read birthdate'));
    const person = await overHttp(t.url, `{ person(oid: "${WIDE}") { firstName snils birthDate } }`, {}, headers);
    expect(person.results[0]!.data.person).toEqual({ firstName: 'Pavel', snils: '111-222-333 44', birthDate: null });
    expect((await overHttp(t.url, '{ queues(first: 1) { totalCount } }', {}, headers)).status).toBe(403);
  });

  it('answers 503 with Retry-After while the provider cannot be reached (the caller is not at fault); keys keep working', async () => {
    const token = await provider.token('ns', 'queues:read');
    // `t` has read the keys already: it goes on verifying while the provider is away, until they are OIDC_JWKS_CACHE_MS old.
    expect((await overHttp(t.url, '{ __typename }', {}, bearer(token))).status).toBe(200);
    await provider.pause();
    expect((await overHttp(t.url, '{ __typename }', {}, bearer(token))).status).toBe(200);
    // Two gateways that start while the provider is away: neither can discover it.
    const [cold, later] = await Promise.all([startTestGateway('pglite', oidcEnv(provider)), startTestGateway('pglite', oidcEnv(provider))]);
    try {
      const res = await fetch(`${cold.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }) });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).not.toBeNull();
      expect(((await res.json()) as { errors: { message: string }[] }).errors[0]!.message).toContain('The bearer token cannot be checked now');
      const rpc = await post(cold.url, '/listQueues', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'listQueues' }), bearer(token));
      expect(rpc.status).toBe(503);
      const ws = await overWs(cold.url, '{ __typename }', {}, { init: bearer(token) });
      expect(ws.closeCode).toBe(1013);
      const withKey = await overHttp(cold.url, '{ queues(first: 1) { totalCount } }', {}, bearer(await makeKey(cold, ['queues:read'])));
      expect(withKey.status).toBe(200);

      await provider.resume();
      // The gateway whose tokens met the outage asks again only after OIDC_JWKS_COOLDOWN_MS (the provider's floor);
      // the one whose start-up alone failed to discover it asks at the first token.
      expect((await overHttp(cold.url, '{ __typename }', {}, bearer(token))).status).toBe(503);
      expect((await overHttp(later.url, '{ __typename }', {}, bearer(token))).status).toBe(200);
    } finally {
      await Promise.all([cold.close(), later.close()]);
    }
  });
});

describe('a provider whose key set fails: the provider is never flooded, the last good keys serve a bounded time', () => {
  const COOLDOWN_MS = 2000;
  const CACHE_MS = 1500;
  const STALE_MS = 3000;
  let provider: TestProvider;
  let k1: SigningKey;
  let t: TestGateway;
  beforeAll(async () => {
    k1 = await signingKey('k1');
    provider = await startTestProvider([{ id: 'backend' }], [k1]);
    t = await startTestGateway('pglite', {
      ...oidcEnv(provider),
      OIDC_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
      OIDC_JWKS_CACHE_MS: String(CACHE_MS),
      OIDC_JWKS_STALE_MS: String(STALE_MS),
      AUTH_CACHE_MS: '0',
    });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  it('failed reads count toward the cooldown, unknown kids cost nothing, stale keys serve, then 503 whose Retry-After is the next read', async () => {
    // Tokens naming made-up keys, crafted first: making 30 keys takes seconds on a busy host, which would otherwise
    // push the failed read they cause (and the cooldown counted from it) past the stale window measured below.
    const strangers = await Promise.all(Array.from({ length: 30 }, async (_, i) => craft(provider, await signingKey(`made-up-${i}`))));
    const token = await provider.token('backend', 'queues:read');
    // The windows below count from the gateway's read of the keys, so the first token must cause one: the start-up's
    // own read (not awaited by the start) must be over and older than OIDC_JWKS_CACHE_MS. The read falls between
    // `readFrom` and `keysReadAt`: each window is measured from the side of it that keeps the check true.
    await vi.waitFor(() => expect(provider.jwksReads()).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
    await new Promise((r) => setTimeout(r, CACHE_MS + 100));
    const readsBeforeFirst = provider.jwksReads();
    const readFrom = Date.now();
    expect((await httpRefusal(t.url, token)).status).toBe(200);
    const keysReadAt = Date.now();
    expect(provider.jwksReads()).toBe(readsBeforeFirst + 1);
    provider.failJwks(500);
    const before = provider.jwksReads();
    // 30 tokens naming made-up keys at once, while the key set fails: one read at most, in flight once.
    const refused = await Promise.all(strangers.map((s) => httpRefusal(t.url, s)));
    for (const r of refused) expect([401, 503]).toContain(r.status);
    expect(provider.jwksReads() - before).toBeLessThanOrEqual(1);

    // The kept keys are older than OIDC_JWKS_CACHE_MS and every read fails: legitimate tokens are still served by
    // them (stale-if-error), and the provider is read at most once per cooldown, whatever the traffic.
    await new Promise((r) => setTimeout(r, keysReadAt + CACHE_MS + 100 - Date.now()));
    const servedFrom = Date.now();
    const readsAtStart = provider.jwksReads();
    let served = 0;
    while (Date.now() < readFrom + CACHE_MS + STALE_MS - 300) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => httpRefusal(t.url, token)));
      for (const a of answers) expect(a.status).toBe(200);
      served += answers.length;
    }
    const reads = provider.jwksReads() - readsAtStart;
    expect(served).toBeGreaterThan(100);
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(Math.ceil((Date.now() - servedFrom) / COOLDOWN_MS) + 1);

    // Past OIDC_JWKS_STALE_MS: 503, and Retry-After says when the gateway will read again.
    await new Promise((r) => setTimeout(r, keysReadAt + CACHE_MS + STALE_MS + 100 - Date.now()));
    const res = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ query: '{ __typename }' }) });
    expect(res.status).toBe(503);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(COOLDOWN_MS / 1000);
    const body = (await res.json()) as { errors: { extensions: { code: string; retryAfterSeconds: number } }[] };
    expect(body.errors[0]!.extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: retryAfter });
    // Asked again before Retry-After: refused without a read. Obeying it: the gateway reads, and serves once it can.
    const readsBeforeRetry = provider.jwksReads();
    expect((await httpRefusal(t.url, token)).status).toBe(503);
    expect(provider.jwksReads()).toBe(readsBeforeRetry);
    provider.failJwks(null);
    await new Promise((r) => setTimeout(r, retryAfter * 1000));
    expect((await httpRefusal(t.url, token)).status).toBe(200);
    expect(provider.jwksReads()).toBe(readsBeforeRetry + 1);
  });

  it('a failed discovery answers 503 with the Retry-After of its own next attempt, and a client that obeys it is served', async () => {
    provider.failJwks(null);
    await provider.pause();
    const cold = await startTestGateway('pglite', { ...oidcEnv(provider), OIDC_JWKS_COOLDOWN_MS: String(COOLDOWN_MS) });
    try {
      // The start-up's own attempt failed; the first token tries again, and fails: the floor counts from it.
      const token = await craft(provider, k1);
      const first = await fetch(`${cold.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ query: '{ __typename }' }) });
      expect(first.status).toBe(503);
      const retryAfter = Number(first.headers.get('retry-after'));
      expect(retryAfter).toBe(COOLDOWN_MS / 1000);
      // The legacy door tells the same time (a second may have passed).
      const rpc = await fetch(`${cold.url}/listQueues`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'listQueues' }) });
      expect(rpc.status).toBe(503);
      const rpcRetryAfter = Number(rpc.headers.get('retry-after'));
      expect(rpcRetryAfter).toBeGreaterThanOrEqual(1);
      expect(rpcRetryAfter).toBeLessThanOrEqual(retryAfter);
      expect(((await rpc.json()) as { error: { data: { retryAfterSeconds: number } } }).error.data.retryAfterSeconds).toBe(rpcRetryAfter);
      const discoveries = provider.discoveryReads();
      await provider.resume();
      expect((await httpRefusal(cold.url, token)).status).toBe(503);
      expect(provider.discoveryReads()).toBe(discoveries);
      await new Promise((r) => setTimeout(r, retryAfter * 1000));
      expect((await httpRefusal(cold.url, token)).status).toBe(200);
    } finally {
      await cold.close();
    }
  });
});

describe('OpenID settings', () => {
  const base = { HOST: '127.0.0.1', OIDC_ISSUER: 'https://login.example/realms/gw', OIDC_AUDIENCE: GATEWAY_RESOURCE };
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('refuses at start-up what would let forged or foreign tokens in', () => {
    expect(refusal(base)).toBeNull();
    expect(refusal({ ...base, OIDC_ALGORITHMS: 'RS256,HS256' })).toContain('OIDC_ALGORITHMS: HS256 not allowed');
    expect(refusal({ ...base, OIDC_ALGORITHMS: 'none' })).toContain('OIDC_ALGORITHMS: none not allowed');
    expect(refusal({ ...base, OIDC_AUDIENCE: '' })).toContain('OIDC_AUDIENCE');
    expect(refusal({ HOST: '127.0.0.1', OIDC_ISSUER: base.OIDC_ISSUER })).toContain('OIDC_AUDIENCE: required with OIDC_ISSUER');
    expect(refusal({ ...base, OIDC_ISSUER: 'http://login.example/realms/gw' })).toContain('OIDC_ISSUER: must be https://');
    expect(refusal({ ...base, OIDC_ISSUER: 'http://127.0.0.1:8080' })).toBeNull();
    expect(refusal({ ...base, OIDC_ISSUER: 'ftp://login.example' })).toContain('OIDC_ISSUER');
  });
});

describe('trusted documents for token callers (TRUSTED_DOCUMENTS default)', () => {
  // The manifest's format is codegen's client preset's (test/trusted-documents.test.ts makes one with codegen itself).
  const listed = 'query Count { queues(first: 1) { totalCount } }';
  const id = `sha256:${createHash('sha256').update(listed).digest('hex')}`;
  let provider: TestProvider;
  let t: TestGateway;
  let adminKey: string;
  beforeAll(async () => {
    provider = await startTestProvider(PROVIDER_CLIENTS, [await signingKey('k1')]);
    const dir = mkdtempSync(join(tmpdir(), 'manifest-'));
    writeFileSync(join(dir, 'persisted-documents.json'), JSON.stringify({ [id]: listed }));
    const { TRUSTED_DOCUMENTS: _default, ...env } = oidcEnv(provider);
    t = await startTestGateway('pglite', { ...env, TRUSTED_DOCUMENTS_MANIFESTS: join(dir, 'persisted-documents.json') });
    adminKey = await makeKey(t, ['admin:all']);
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  const send = async (body: Record<string, unknown>, headers: Record<string, string>) => {
    const res = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] } };
  };

  it('a token runs a listed document by id, and its text is refused; a key still runs any text', async () => {
    const token = await provider.token('backend', 'queues:read');
    const byId = await send({ documentId: id }, bearer(token));
    expect(byId).toEqual({ status: 200, body: { data: { queues: { totalCount: 0 } } } });
    const text = await send({ query: listed }, bearer(token));
    expect(text.status).toBe(400);
    expect(text.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_DOCUMENT_REQUIRED');
    const unlisted = await send({ query: '{ queues(first: 2) { totalCount } }' }, bearer(adminKey));
    expect(unlisted).toEqual({ status: 200, body: { data: { queues: { totalCount: 0 } } } });
    // Over graphql-ws too: the token's text is refused, by id it runs.
    const overSocket = await overWs(t.url, listed, {}, { init: { authorization: `Bearer ${token}` } });
    expect(overSocket.results[0]!.errors?.[0]?.extensions?.code).toBe('PERSISTED_DOCUMENT_REQUIRED');
  });
});
