import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient } from 'graphql-sse';
import type { Gateway } from '../src/app.js';
import { createApiKey } from '../src/access/api-keys.js';
import { startProxiedGateway, type ProxiedGateway } from './helpers/gateway.js';
import type { TcpProxy } from './helpers/tcp-proxy.js';
import { rawRequest } from './helpers/transports.js';

// A database outage met before any operation runs (the key lookup, with AUTH=on and no key cache) answers the same on
// every door: 503 with Retry-After in the door's envelope, nothing internal; over server-sent events the error travels
// in a 200 stream, as every GraphQL answer there does. The outage is a TCP relay the test cuts (PostgreSQL only: the
// embedded database lives inside the process and cannot become unreachable).

const UNKNOWN_KEY = `gw_0123456789ab_${'A'.repeat(43)}`;

describe('a database outage at the key lookup (PostgreSQL, AUTH=on)', () => {
  let t: ProxiedGateway;
  let proxy: TcpProxy;
  let gateway: Gateway;
  let key: string;
  let scraper: string;

  beforeAll(async () => {
    t = await startProxiedGateway({ AUTH: 'on', AUTH_CACHE_MS: '0', DATABASE_CONNECT_TIMEOUT_MS: '1000', SCHEDULER: 'off', TASK_DISPATCHER: 'off', DELIVERY_WORKER: 'off' });
    ({ proxy, gateway } = t);
    ({ key } = await createApiKey(gateway.services.db, { name: 'reader', scopes: ['queues:read'] }));
    ({ key: scraper } = await createApiKey(gateway.services.db, { name: 'scraper', scopes: ['metrics:read'] }));
  });
  afterAll(() => t?.close());

  /** Nothing of the driver, the database's address or a stack reaches the client. */
  const expectNothingInternal = (body: string) => {
    for (const leak of [String(proxy.port), '127.0.0.1', 'ECONN', 'Prisma', 'findUnique', '    at ', 'src/']) expect(body).not.toContain(leak);
  };

  it('/metrics, with an unknown or a valid key, answers 503 with Retry-After like every other door; again 200 when the database is back', async () => {
    await proxy.cut();
    try {
      for (const presented of [UNKNOWN_KEY, scraper]) {
        const metrics = await rawRequest(gateway.url, '/metrics', { headers: { authorization: `Bearer ${presented}` } });
        expect(metrics.status, metrics.body).toBe(503);
        expect(metrics.headers['retry-after']).toMatch(/^\d+$/);
        expect(JSON.parse(metrics.body)).toEqual({
          error: { status: 503, code: 'SERVICE_UNAVAILABLE', message: expect.any(String), retryAfterSeconds: Number(metrics.headers['retry-after']) },
        });
        expectNothingInternal(metrics.body);
      }
      // The other doors, with the same unknown key.
      const auth = { authorization: `Bearer ${UNKNOWN_KEY}` };
      const json = { 'content-type': 'application/json' };
      const query = JSON.stringify({ query: '{ queues { totalCount } }' });
      const doors = [
        rawRequest(gateway.url, '/getQueue', { method: 'POST', headers: { ...auth, ...json }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getQueue', params: { name: 'q' } }) }),
        rawRequest(gateway.url, '/v1/type/webhook', { headers: auth }),
        rawRequest(gateway.url, '/graphql', { method: 'POST', headers: { ...auth, ...json }, body: query }),
        rawRequest(gateway.url, `/graphql?query=${encodeURIComponent('{ queues { totalCount } }')}`, { headers: auth }),
      ];
      for (const answer of await Promise.all(doors)) {
        expect(answer.status, answer.body).toBe(503);
        expect(answer.headers['retry-after']).toMatch(/^\d+$/);
        expect(answer.body).toContain('SERVICE_UNAVAILABLE');
        expectNothingInternal(answer.body);
      }
      const socket = await new Promise<{ code: number; reason: string }>((resolve) => {
        const ws = new WebSocket(`${gateway.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
        ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: auth })));
        ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
      });
      expect(socket.code).toBe(1013);
      expectNothingInternal(socket.reason);
    } finally {
      await proxy.restore();
    }
    const back = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${scraper}` } });
    expect(back.status).toBe(200);
    expect(await back.text()).toContain('gateway_http_requests_total');
  });

  it('server-sent events: the outage reaches a graphql-sse client in the stream (SERVICE_UNAVAILABLE, retryAfterSeconds), not as a network error', async () => {
    await proxy.cut();
    try {
      for (const presented of [UNKNOWN_KEY, key]) {
        for (const query of ['{ queues { totalCount } }', 'subscription { queueChanged(name: "q") { name } }']) {
          const client = createClient({ url: `${gateway.url}/graphql`, headers: { authorization: `Bearer ${presented}` }, retryAttempts: 0 });
          const seen: { next: unknown[]; error?: unknown; completed: boolean } = { next: [], completed: false };
          await new Promise<void>((resolve) => {
            client.subscribe({ query }, { next: (v) => void seen.next.push(v), error: (e) => ((seen.error = e), resolve()), complete: () => ((seen.completed = true), resolve()) });
          });
          client.dispose();
          expect(seen.error, String(seen.error)).toBeUndefined();
          expect(seen.completed).toBe(true);
          expect(seen.next).toEqual([{ errors: [expect.objectContaining({ extensions: { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: expect.any(Number) } })] }]);
          expectNothingInternal(JSON.stringify(seen.next));
        }
      }
      // The same stream, as it is on the wire: HTTP 200, an event with the error, then complete.
      const raw = await rawRequest(gateway.url, '/graphql', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ query: '{ queues { totalCount } }' }),
      });
      expect(raw.status).toBe(200);
      expect(raw.body).toMatch(/event: next\ndata: \{"errors":\[\{[^\n]*"SERVICE_UNAVAILABLE"[^\n]*\n\nevent: complete/);
    } finally {
      await proxy.restore();
    }
  });
});
