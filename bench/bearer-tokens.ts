// `npm run bench:tokens`: what a bearer token costs a request, against an API key, on the gateway as the Dockerfile
// runs it (compiled, NODE_ENV=production, AUTH=on, no rate limit, no workers).
//
// A real OpenID provider (oidc-provider, test/helpers/oidc-provider.ts) in this process issues one JWT access token
// (RS256); one fresh PostgreSQL database (BENCH_POSTGRES_URL, default the test server) holds the API key. Three
// gateway processes over it: called with the key; with the token, verified tokens remembered (AUTH_CACHE_MS 5000, the
// default); with the token and AUTH_CACHE_MS=0, so that every request verifies the signature and the claims. Each
// is loaded with `{ __typename }` over POST /graphql (needs a caller, reads nothing: what is measured is the caller's
// check) by autocannon (BENCH_CONNECTIONS 16) in BENCH_ROUNDS (4) rounds, a new order each, of BENCH_SECONDS / rounds
// (8 s in all) after a 2 s warm-up. Prints req/s, p99 and the gateway's CPU per request (median of the rounds), and the
// ratio of each to the key.
import autocannon from 'autocannon';
import { createApiKey } from '../src/access/api-keys.js';
import { openDatabase } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { freshDatabase } from '../test/helpers/databases.js';
import { GATEWAY_RESOURCE, signingKey, startTestProvider } from '../test/helpers/oidc-provider.js';
import { cpuSeconds, median, roundOrders, runBench, startGateway, type Child } from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 4));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

interface Target {
  name: string;
  child: Child;
  authorization: string;
  rates: number[];
  p99s: number[];
  cpuPerRequest: number[];
}

runBench(async () => {
  const db = await freshDatabase('postgres', process.env.BENCH_POSTGRES_URL);
  const provider = await startTestProvider([{ id: 'bench', ttl: 3600 }], [await signingKey('k1')]);
  const targets: Target[] = [];
  try {
    const database = await openDatabase({ databaseUrl: db.url, dataDir: 'unused', poolMax: 2 });
    await applyMigrations(database.adapterFactory);
    const { key } = await createApiKey(database.prisma, { name: 'bench', scopes: ['queues:read'] });
    await database.close();
    const token = await provider.token('bench', 'queues:read');
    // The text `{ __typename }` is sent by every target alike: token callers are held to listed documents by default.
    const base = { AUTH: 'on', DATABASE_URL: db.url, MIGRATE_ON_START: 'off', RATE_LIMIT_PER_MINUTE: '0', OIDC_ISSUER: provider.issuer, OIDC_AUDIENCE: GATEWAY_RESOURCE, TRUSTED_DOCUMENTS: 'off' };
    const start = async (name: string, authorization: string, env: Record<string, string> = {}) =>
      targets.push({ name, child: await startGateway({ ...base, ...env }), authorization, rates: [], p99s: [], cpuPerRequest: [] });
    await start('API key', `Bearer ${key}`);
    await start('token, remembered', `Bearer ${token}`);
    await start('token, verified each time', `Bearer ${token}`, { AUTH_CACHE_MS: '0' });

    const run = (target: Target, seconds: number) =>
      autocannon({
        url: `${target.child.url}/graphql`,
        method: 'POST',
        connections: CONNECTIONS,
        duration: seconds,
        headers: { 'content-type': 'application/json', authorization: target.authorization },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
    for (const target of targets) {
      const warm = await run(target, 2);
      if (warm.non2xx > 0) throw new Error(`${target.name}: ${warm.non2xx} answers were not 2xx`);
    }
    for (const order of roundOrders(targets, ROUNDS)) {
      for (const target of order) {
        const cpuBefore = cpuSeconds(target.child.process.pid!);
        const result = await run(target, SECONDS / ROUNDS);
        const cpu = cpuSeconds(target.child.process.pid!) - cpuBefore;
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${target.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        target.rates.push(result.requests.average);
        target.p99s.push(result.latency.p99);
        target.cpuPerRequest.push((cpu * 1000) / result.requests.total);
      }
    }
    const key0 = targets[0]!;
    console.log('\n| caller | req/s | p99 ms | gateway CPU ms/request | req/s vs key |');
    console.log('|---|---|---|---|---|');
    for (const t of targets) {
      console.log(`| ${t.name} | ${median(t.rates).toFixed(0)} | ${median(t.p99s).toFixed(1)} | ${median(t.cpuPerRequest).toFixed(3)} | ${(median(t.rates) / median(key0.rates)).toFixed(2)}x |`);
    }
  } finally {
    for (const t of targets) await t.child.stop();
    await provider.close();
    await db.drop();
  }
});
