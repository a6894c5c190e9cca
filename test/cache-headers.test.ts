import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';
import { createApiKey } from '../src/access/api-keys.js';
import { importIdentity } from '../src/identity/import.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { identityFixture, WIDE } from './helpers/identity-fixture.js';
import { rawRequest } from './helpers/transports.js';

// What caches may keep (src/http/cache-policy.ts), on every door: answers that depend on the caller (its key, its
// X-IdpScopes) are `no-store` and vary by the caller's headers, personal data included; public resources (GraphiQL,
// /openapi.json) keep their own Cache-Control and vary by no caller header; with CORS_ORIGINS every answer varies by
// Origin. The caching does not depend on the database, so the embedded one serves.

const ORIGIN = 'https://app.example';
const CALLER = ['authorization', 'x-api-key', 'x-idpscopes'];

type Answer = Awaited<ReturnType<typeof rawRequest>>;
const varyOf = (answer: Answer) =>
  String(answer.headers.vary ?? '')
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);

describe('cache headers on every door (AUTH=on, CORS_ORIGINS set)', () => {
  let db: FreshDatabase;
  let gateway: Gateway;
  let admin: Record<string, string>;
  const accessLines: { path: string; via?: string }[] = [];

  beforeAll(async () => {
    db = await freshDatabase('pglite');
    const lines = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) {
          const entry = JSON.parse(line) as { msg?: string; path?: string; via?: string };
          if (entry.msg === 'request' && entry.path) accessLines.push({ path: entry.path, ...(entry.via && { via: entry.via }) });
        }
        done();
      },
    });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', AUTH: 'on', CORS_ORIGINS: ORIGIN, SCHEDULER: 'off', TASK_DISPATCHER: 'off', DELIVERY_WORKER: 'off', ...db.env });
    gateway = await startGateway(config, { log: pino({ level: 'info' }, lines) });
    await importIdentity(gateway.services.db, identityFixture());
    const { key } = await createApiKey(gateway.services.db, { name: 'admin', scopes: ['admin:all'] });
    admin = { authorization: `Bearer ${key}` };
  });
  afterAll(async () => {
    await gateway?.close();
    await db?.drop();
  });

  const expectCallerDependent = (what: string, answer: Answer) => {
    expect(answer.headers['cache-control'], what).toBe('no-store');
    expect(varyOf(answer), what).toEqual(expect.arrayContaining([...CALLER, 'origin']));
  };

  it('personal data and every other caller-dependent answer: no-store, Vary: Authorization, X-Api-Key, X-IdpScopes, Origin', async () => {
    const json = { 'content-type': 'application/json' };
    const person = `/api/data/getPersonById?oid=${WIDE}`;
    const call = { method: 'POST', headers: { ...admin, ...json }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getQueue', params: { name: 'none' } }) };
    const gql = JSON.stringify({ query: `{ person(oid: "${WIDE}") { firstName snils } }` });
    for (const origin of [{}, { origin: ORIGIN }] as Record<string, string>[]) {
      // Without an Origin the legacy calls take the node:http door, with one Yoga's (the access lines below say so).
      const named = await rawRequest(gateway.url, person, { headers: { ...admin, ...origin, 'x-idpscopes': 'fullname snils' } });
      expect(named.status).toBe(200);
      expect(JSON.parse(named.body)).toMatchObject({ firstName: 'Pavel', snils: '111-222-333 44' });
      expectCallerDependent('getPersonById', named);
      expect(named.headers.etag).toMatch(/^"/);
      // The same view (the eTag is made from the fields X-IdpScopes releases): 304.
      const notModified = await rawRequest(gateway.url, person, { headers: { ...admin, ...origin, 'x-idpscopes': 'fullname snils', 'if-none-match': String(named.headers.etag) } });
      expect(notModified.status).toBe(304);
      expectCallerDependent('getPersonById 304', notModified);
      expectCallerDependent('JSON-RPC', await rawRequest(gateway.url, '/getQueue', { ...call, headers: { ...call.headers, ...origin } }));
      expectCallerDependent('no key', await rawRequest(gateway.url, person, { headers: origin }));
      expectCallerDependent('/graphql POST', await rawRequest(gateway.url, '/graphql', { method: 'POST', headers: { ...admin, ...json, ...origin }, body: gql }));
      expectCallerDependent('/graphql GET', await rawRequest(gateway.url, `/graphql?query=${encodeURIComponent('{ queues { totalCount } }')}`, { headers: { ...admin, ...origin } }));
      const sse = await rawRequest(gateway.url, '/graphql', { method: 'POST', headers: { ...admin, ...json, ...origin, accept: 'text/event-stream' }, body: gql });
      expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
      expectCallerDependent('SSE', sse);
      expectCallerDependent('/graphql without a key', await rawRequest(gateway.url, '/graphql', { method: 'POST', headers: { ...json, ...origin }, body: gql }));
      expectCallerDependent('/metrics', await rawRequest(gateway.url, '/metrics', { headers: { ...admin, ...origin } }));
    }
    expect(accessLines.filter((l) => l.path === '/api/data/getPersonById').map((l) => l.via ?? 'yoga')).toEqual(['node:http', 'node:http', 'node:http', 'yoga', 'yoga', 'yoga']);
    expect(accessLines.filter((l) => l.path === '/getQueue').map((l) => l.via ?? 'yoga')).toEqual(['node:http', 'yoga']);
  });

  it('a CORS preflight varies by Origin', async () => {
    const preflight = await rawRequest(gateway.url, '/graphql', { method: 'OPTIONS', headers: { origin: ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
    expect(preflight.headers['access-control-allow-origin']).toBe(ORIGIN);
    expect(varyOf(preflight)).toContain('origin');
  });

  it('public resources keep their own Cache-Control and vary by no caller header: /openapi.json, the GraphiQL page and its assets', async () => {
    const openApi = await rawRequest(gateway.url, '/openapi.json');
    expect(openApi.status).toBe(200);
    expect(openApi.headers['cache-control']).toBe('public, max-age=300');
    const page = await rawRequest(gateway.url, '/graphql', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers['cache-control']).toBe('public, no-cache');
    expect(varyOf(page)).toEqual(expect.arrayContaining(['accept', 'origin']));
    const asset = /<script[^>]* src="(\/graphiql\/[^"]+)"/.exec(page.body)?.[1];
    expect(asset).toBeDefined();
    const script = await rawRequest(gateway.url, asset!);
    expect(script.status).toBe(200);
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    for (const answer of [openApi, page, script]) {
      expect(varyOf(answer)).toContain('origin');
      for (const header of CALLER) expect(varyOf(answer)).not.toContain(header);
    }
  });
});
