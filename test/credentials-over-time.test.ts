import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createApiKey, revokeApiKey } from '../src/access/api-keys.js';
import { startGateway, type Gateway } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { TOKEN_EXPIRED_REASON } from '../src/edge/ws.js';
import { DATABASES, freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { gql, NO_WORKERS, post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer } from './helpers/keys.js';
import { GATEWAY_RESOURCE, signingKey, startTestProvider, type TestProvider } from './helpers/oidc-provider.js';
import { openSocket, openStream, until, type OpenSocket, type OpenStream } from './helpers/open-connections.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.js';

// A credential holds for the life of what it opened: a key revoked (by this process, by another, or from the CLI
// straight in the database) or a token that expires ends its graphql-ws sockets (close 4403) and its SSE streams (an
// UNAUTHENTICATED event, then the end) within the documented bound, max(AUTH_CACHE_MS, 1 s); each operation sent on an
// open socket runs with the credential as it is now. A real oidc-provider issues the tokens.

const AUTH_CACHE_MS = 1000;
/** The documented bound (max(AUTH_CACHE_MS, 1 s)) plus the time a round and a close take on a loaded machine. */
const BOUND_MS = AUTH_CACHE_MS + 1500;
const SUBSCRIPTION = 'subscription { queueChanged(name: "q") { name paused } }';
const REVOKED = 'The API key is unknown, malformed or revoked.';

function env(provider: TestProvider): Record<string, string> {
  return {
    AUTH: 'on',
    ...NO_WORKERS,
    AUTH_CACHE_MS: String(AUTH_CACHE_MS),
    RATE_LIMIT_PER_MINUTE: '0',
    OIDC_ISSUER: provider.issuer,
    OIDC_AUDIENCE: GATEWAY_RESOURCE,
    OIDC_CLOCK_TOLERANCE_SECONDS: '0',
    TRUSTED_DOCUMENTS: 'off',
  };
}

const expOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { exp: number }).exp * 1000;

/** A socket and a stream opened with `headers`, both following the queue. */
async function follow(url: string, headers: Record<string, string>): Promise<{ socket: OpenSocket; stream: OpenStream }> {
  const socket = await openSocket(url, headers);
  socket.subscribe(SUBSCRIPTION);
  const stream = await openStream(url, SUBSCRIPTION, headers);
  expect(stream.status).toBe(200);
  return { socket, stream };
}

/** The stream's last `next` carried UNAUTHENTICATED with `message`, then `complete`, and the stream ended. */
async function expectStreamRefused(stream: OpenStream, message: string, notBefore: number): Promise<number> {
  const endedAt = await Promise.race([stream.ended, new Promise<number>((_, reject) => setTimeout(() => reject(new Error('the stream did not end')), BOUND_MS + 2000))]);
  const [next, complete] = stream.events.slice(-2);
  expect(next?.event).toBe('next');
  expect(next?.data.errors[0]).toMatchObject({ message, extensions: { code: 'UNAUTHENTICATED' } });
  expect(complete?.event).toBe('complete');
  expect(next!.at).toBeGreaterThanOrEqual(notBefore);
  expect(next!.at - notBefore).toBeLessThan(BOUND_MS);
  return endedAt;
}

async function expectSocketRefused(socket: OpenSocket, reason: string, notBefore: number): Promise<void> {
  const closed = await Promise.race([socket.closed, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the socket stayed open')), BOUND_MS + 2000))]);
  expect(closed).toMatchObject({ code: 4403, reason });
  expect(closed.at).toBeGreaterThanOrEqual(notBefore);
  expect(closed.at - notBefore).toBeLessThan(BOUND_MS);
}

const paused = async (url: string, adminKey: string, name: string) => (await gql(url, `{ queue(name: "${name}") { paused } }`, {}, bearer(adminKey))).data?.queue?.paused as boolean;

describe.each(DATABASES)('credentials over time on %s (one process)', (kind) => {
  let provider: TestProvider;
  let t: TestGateway;
  let adminKey: string;
  beforeAll(async () => {
    provider = await startTestProvider([{ id: 'short', ttl: 3 }], [await signingKey('k1')]);
    t = await startTestGateway(kind, env(provider));
    ({ key: adminKey } = await createApiKey(t.gateway.services.db, { name: 'admin', scopes: ['admin:all'] }));
    for (const name of ['q', 'q2', 'q3']) expect((await gql(t.url, `mutation { createQueue(input: { name: "${name}" }) { name } }`, {}, bearer(adminKey))).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  it('a key revoked from the CLI (straight in the database): its socket closes 4403, its stream ends UNAUTHENTICATED, nothing runs after', async () => {
    const { key, apiKey } = await createApiKey(t.gateway.services.db, { name: 'leaked', scopes: ['queues:read', 'queues:write'] });
    const { socket, stream } = await follow(t.url, bearer(key));
    // The socket's own operations run while the key holds.
    expect((await socket.operation('mutation { pauseQueue(name: "q2") { paused } }'))[0]?.payload.data).toEqual({ pauseQueue: { paused: true } });
    await until(() => t.gateway.services.credentials.held() >= 2, 5000, 'the socket and the stream are held');
    await revokeApiKey(t.gateway.services.db, apiKey.id);
    const revokedAt = Date.now();
    await Promise.all([expectSocketRefused(socket, REVOKED, revokedAt), expectStreamRefused(stream, REVOKED, revokedAt)]);
    // What a new connection and a new request get, the same words.
    await expect(openSocket(t.url, bearer(key))).rejects.toThrow(`closed 4403 ${REVOKED}`);
    expect((await gql(t.url, '{ __typename }', {}, bearer(key))).status).toBe(401);
    expect(t.gateway.services.credentials.held()).toBe(0);
  });

  it('a key revoked over GraphQL by this process: its holders end at once', async () => {
    const { key, apiKey } = await createApiKey(t.gateway.services.db, { name: 'leaked twice', scopes: ['queues:read'] });
    const { socket, stream } = await follow(t.url, bearer(key));
    await until(() => t.gateway.services.credentials.held() >= 2, 5000, 'the socket and the stream are held');
    const revokedAt = Date.now();
    const revoked = await gql(t.url, `mutation { revokeApiKey(id: "${apiKey.id}") { revokedAt } }`, {}, bearer(adminKey));
    expect(revoked.errors).toBeUndefined();
    const answeredAt = Date.now();
    await Promise.all([expectSocketRefused(socket, REVOKED, revokedAt), expectStreamRefused(stream, REVOKED, revokedAt)]);
    // Ended before the mutation answered (a round of this process after the revocation).
    expect(stream.events.at(-2)!.at).toBeLessThanOrEqual(answeredAt + 50);
  });

  it('a bearer token expiring: its SSE stream gets UNAUTHENTICATED at exp and ends, its socket closes 4403', async () => {
    const token = await provider.token('short', 'queues:read');
    const exp = expOf(token);
    const { socket, stream } = await follow(t.url, bearer(token));
    await Promise.all([expectSocketRefused(socket, TOKEN_EXPIRED_REASON, exp), expectStreamRefused(stream, 'The bearer token is refused: the token expired.', exp)]);
  });

  it('each operation on an open socket runs with its key as it is now (the watch stopped: the operation alone refuses)', async () => {
    const { key, apiKey } = await createApiKey(t.gateway.services.db, { name: 'leaked thrice', scopes: ['queues:read', 'queues:write'] });
    const socket = await openSocket(t.url, bearer(key));
    // Stop the rounds that would close the socket: what remains is the check of each operation.
    t.gateway.services.credentials.close();
    await revokeApiKey(t.gateway.services.db, apiKey.id);
    await new Promise((r) => setTimeout(r, AUTH_CACHE_MS + 100));
    const answer = await socket.operation('mutation { pauseQueue(name: "q3") { paused } }');
    expect(answer[0]).toMatchObject({ type: 'error', payload: [{ message: REVOKED, extensions: { code: 'UNAUTHENTICATED' } }] });
    expect(await socket.closed).toMatchObject({ code: 4403, reason: REVOKED });
    expect(await paused(t.url, adminKey, 'q3')).toBe(false);
  });
});

describe('credentials over time across two processes on one PostgreSQL database', () => {
  let provider: TestProvider;
  let db: FreshDatabase;
  let a: Gateway;
  let b: GatewayProcess;
  let bUrl: string;
  let adminKey: string;
  beforeAll(async () => {
    provider = await startTestProvider([{ id: 'short', ttl: 4 }], [await signingKey('k1')]);
    db = await freshDatabase('postgres');
    a = await startGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', OUTBOUND_ALLOW: '127.0.0.1', ...db.env, ...env(provider) }), { log: pino({ level: 'silent' }) });
    b = startGatewayProcess({ ...db.env, ...env(provider), LOG_LEVEL: 'info' });
    bUrl = await b.url;
    ({ key: adminKey } = await createApiKey(a.services.db, { name: 'admin', scopes: ['admin:all'] }));
    expect((await gql(a.url, 'mutation { createQueue(input: { name: "q" }) { name } }', {}, bearer(adminKey))).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await b?.stop();
    await a?.close();
    await db?.drop();
    await provider?.close();
  });

  it("a key revoked in one process ends the other process's sockets and streams, and its operations", async () => {
    const { key, apiKey } = await createApiKey(a.services.db, { name: 'leaked', scopes: ['queues:read', 'queues:write'] });
    const { socket, stream } = await follow(bUrl, bearer(key));
    const other = await openSocket(bUrl, bearer(key));
    expect((await other.operation('mutation { pauseQueue(name: "q") { paused } }'))[0]?.payload.data).toEqual({ pauseQueue: { paused: true } });
    // Both processes have verified the key (and remember it for AUTH_CACHE_MS).
    expect((await gql(a.url, '{ __typename }', {}, bearer(key))).status).toBe(200);
    const revokedAt = Date.now();
    const revoked = await gql(a.url, `mutation { revokeApiKey(id: "${apiKey.id}") { revokedAt } }`, {}, bearer(adminKey));
    expect(revoked.errors).toBeUndefined();
    await Promise.all([expectSocketRefused(socket, REVOKED, revokedAt), expectSocketRefused(other, REVOKED, revokedAt), expectStreamRefused(stream, REVOKED, revokedAt)]);
    // Every other door of that process refuses the key too.
    expect((await gql(bUrl, 'mutation { resumeQueue(name: "q") { paused } }', {}, bearer(key))).status).toBe(401);
    expect((await post(bUrl, '/resumeQueue', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resumeQueue', params: { name: 'q' } }), bearer(key))).status).toBe(401);
    expect((await post(bUrl, '/rpc', JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'resumeQueue', params: { name: 'q' } }]), bearer(key))).status).toBe(401);
    expect(await paused(a.url, adminKey, 'q')).toBe(true);
    const ended = () => b.logLines.filter((l) => l.msg === 'an API key was revoked: its sockets and streams are ended');
    await until(() => ended().length > 0, 2000, 'the other process logs why it ended them');
    expect(ended()).toEqual([expect.objectContaining({ keyId: apiKey.id, holders: 3 })]);
  });

  it("a token's socket and stream on the other process end at its expiry", async () => {
    const token = await provider.token('short', 'queues:read');
    const exp = expOf(token);
    const { socket, stream } = await follow(bUrl, bearer(token));
    await Promise.all([expectSocketRefused(socket, TOKEN_EXPIRED_REASON, exp), expectStreamRefused(stream, 'The bearer token is refused: the token expired.', exp)]);
  });
});
