import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import { openDatabase } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { freshDatabase } from '../test/helpers/databases.js';
import { GENERATE_PERSONS } from './fixtures.js';
import { cpuSeconds, runBench, startChild, startGateway, type Child } from './lib.js';

// `npm run bench:identity`: a fresh PostgreSQL database with 100,000 generated persons; getPersonById through the
// gateway's legacy path and through GraphQL, against a bare node:http + pg server running the same single SELECT
// and answering the same JSON. Prints requests/s, p99 and the ratios to the bare server.
//
// Env: BENCH_POSTGRES_URL (server to create the database on; default postgresql://postgres@127.0.0.1:5432/test),
// BENCH_PERSONS (100000), BENCH_SECONDS (10 per target), BENCH_CONNECTIONS (50).

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const PERSONS = Number(process.env.BENCH_PERSONS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const FIRST_OID = 5_000_000_000;

interface Measured {
  result: Result;
  cpuMsPerRequest: number;
}

const randomOid = () => String(FIRST_OID + 1 + Math.floor(Math.random() * PERSONS));

async function load(
  name: string,
  url: string,
  pid: number,
  request: () => { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<Measured> {
  const run = (duration: number) =>
    autocannon({ url, connections: CONNECTIONS, duration, requests: [{ setupRequest: (req) => ({ ...req, ...request() }) }] });
  await run(Math.min(3, SECONDS)); // warm-up: JIT, pools, caches
  const cpuBefore = cpuSeconds(pid);
  const result = await run(SECONDS);
  const cpuMsPerRequest = ((cpuSeconds(pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total);
  if (result.non2xx || result.errors || result.timeouts) console.error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { result, cpuMsPerRequest };
}

async function main(): Promise<void> {
  const db = await freshDatabase('postgres', ADMIN_URL);
  const children: Child[] = [];
  try {
    const database = await openDatabase({ databaseUrl: db.url, dataDir: 'unused' });
    await applyMigrations(database.adapterFactory);
    const started = Date.now();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(GENERATE_PERSONS, [FIRST_OID, PERSONS]);
    await client.query('ANALYZE "Person"');
    await client.end();
    await database.close();
    console.log(`generated ${PERSONS} persons in ${Date.now() - started} ms`);

    const gateway = await startGateway({ DATABASE_URL: db.url, MIGRATE_ON_START: 'off' });
    const bare = await startChild('bench/identity-bare.ts', [], { DATABASE_URL: db.url });
    children.push(gateway, bare);

    // Same answer from both doors before measuring.
    const oid = String(FIRST_OID + 42);
    const [a, b] = await Promise.all([bare.url, gateway.url].map((u) => fetch(`${u}/api/data/getPersonById?oid=${oid}`).then((r) => r.text())));
    if (a !== b) throw new Error(`the bare server and the gateway disagree:\n${a}\n${b}`);

    const query = 'query($oid: String!) { person(oid: $oid) { stateFacts firstName lastName middleName birthDate birthPlace gender trusted rfgUOperatorCheck citizenship snils inn updatedOn status verifying rIdDoc containsUpCfmCode eTag links ridDoc etag } }';
    const rows: [string, Measured][] = [];
    const gatewayPid = gateway.process.pid!;
    rows.push(['bare node:http + pg', await load('bare', bare.url, bare.process.pid!, () => ({ method: 'GET', path: `/api/data/getPersonById?oid=${randomOid()}` }))]);
    rows.push(['gateway legacy GET /api/data/getPersonById', await load('legacy', gateway.url, gatewayPid, () => ({ method: 'GET', path: `/api/data/getPersonById?oid=${randomOid()}` }))]);
    rows.push([
      'gateway GraphQL person(oid)',
      await load('graphql', gateway.url, gatewayPid, () => ({
        method: 'POST',
        path: '/graphql',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables: { oid: randomOid() } }),
      })),
    ]);
    const base = rows[0]![1];
    console.log(`\ngetPersonById, ${PERSONS} persons, ${CONNECTIONS} connections, ${SECONDS} s per target, one machine:`);
    console.log('target                                        req/s    p99 ms   ratio   server CPU ms/req   CPU ratio');
    for (const [name, { result: r, cpuMsPerRequest: cpu }] of rows) {
      console.log(
        `${name.padEnd(44)} ${r.requests.average.toFixed(0).padStart(7)} ${String(r.latency.p99).padStart(8)}   ${(r.requests.average / base.result.requests.average).toFixed(2)}` +
          `   ${cpu.toFixed(3).padStart(17)}   ${(base.cpuMsPerRequest / cpu).toFixed(2).padStart(9)}`,
      );
    }
    const legacyRatio = rows[1]![1].result.requests.average / base.result.requests.average;
    console.log(`\ngoal: legacy path >= 0.50 of the bare server's throughput: ${legacyRatio >= 0.5 ? 'met' : 'NOT met'} (${legacyRatio.toFixed(2)})`);
    console.log('(CPU ratio = bare CPU per request / target CPU per request: the throughput ratio on an otherwise idle machine.)');
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await db.drop();
  }
}

runBench(main);
