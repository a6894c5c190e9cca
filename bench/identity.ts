import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import { openDatabase } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { freshDatabase } from '../test/helpers/databases.js';

// `npm run bench:identity`: a fresh PostgreSQL database with 100,000 generated persons; getPersonById through the
// gateway's legacy path and through GraphQL, against a bare node:http + pg server running the same single SELECT
// and answering the same JSON. Prints requests/s, p99 and the ratios to the bare server.
//
// Env: BENCH_POSTGRES_URL (server to create the database on; default postgresql://postgres@127.0.0.1:5432/test),
// BENCH_PERSONS (100000), BENCH_SECONDS (10 per target), BENCH_CONNECTIONS (50).

const ROOT = resolve(import.meta.dirname, '..');
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const PERSONS = Number(process.env.BENCH_PERSONS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const FIRST_OID = 5_000_000_000;

// One INSERT ... SELECT generate_series: every person differs (names, SNILS, INN, eTag) without 100k round trips.
const GENERATE_PERSONS = `
  INSERT INTO "Person" ("oid", "firstName", "lastName", "middleName", "birthDate", "birthPlace", "gender", "trusted",
    "citizenship", "snils", "inn", "updatedOn", "status", "rIdDoc", "eTag", "stateFacts")
  SELECT ($1::bigint + i)::text, 'First' || i, 'Last' || i, 'Middle' || (i % 1000),
    lpad(((i % 28) + 1)::text, 2, '0') || '.' || lpad(((i % 12) + 1)::text, 2, '0') || '.' || (1950 + i % 50),
    'City ' || (i % 500), CASE WHEN i % 2 = 0 THEN 'M' ELSE 'F' END, i % 3 <> 0, 'RUS',
    lpad((i / 100000 % 1000)::text, 3, '0') || '-' || lpad((i / 100 % 1000)::text, 3, '0') || '-' || lpad((i % 1000)::text, 3, '0') || ' ' || lpad((i % 100)::text, 2, '0'),
    lpad(i::text, 12, '0'), now(), 'REGISTERED', 1000000 + i, md5(i::text), ARRAY['EntityRoot']
  FROM generate_series(1, $2::int) AS i`;


/** Starts a child process and resolves with the `url` of the first JSON line that carries one. */
function startChild(args: string[], env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(join(ROOT, 'node_modules/.bin/tsx'), args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolveUrl, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as { url?: string };
        if (parsed.url) resolveUrl({ url: parsed.url, child });
      } catch {
        /* not a JSON line */
      }
    });
  });
}

/** CPU seconds used so far by a process and its descendants (Linux /proc; NaN elsewhere). Robust to a busy machine. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    let ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const child of children ? children.split(' ') : []) ticks += cpuSeconds(Number(child)) * 100;
    return ticks / 100;
  } catch {
    return Number.NaN;
  }
}

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
  const children: ChildProcess[] = [];
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

    const gateway = await startChild(['src/main.ts', 'serve'], { DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', AUTH: 'off', LOG_LEVEL: 'info', MIGRATE_ON_START: 'off', GRAPHIQL: 'off', TASK_DISPATCHER: 'off', SCHEDULER: 'off', DELIVERY_WORKER: 'off' });
    const bare = await startChild(['bench/identity-bare.ts'], { DATABASE_URL: db.url });
    children.push(gateway.child, bare.child);

    // Same answer from both doors before measuring.
    const oid = String(FIRST_OID + 42);
    const [a, b] = await Promise.all([bare.url, gateway.url].map((u) => fetch(`${u}/api/data/getPersonById?oid=${oid}`).then((r) => r.text())));
    if (a !== b) throw new Error(`the bare server and the gateway disagree:\n${a}\n${b}`);

    const query = 'query($oid: String!) { person(oid: $oid) { stateFacts firstName lastName middleName birthDate birthPlace gender trusted rfgUOperatorCheck citizenship snils inn updatedOn status verifying rIdDoc containsUpCfmCode eTag links ridDoc etag } }';
    const rows: [string, Measured][] = [];
    const gatewayPid = gateway.child.pid!;
    rows.push(['bare node:http + pg', await load('bare', bare.url, bare.child.pid!, () => ({ method: 'GET', path: `/api/data/getPersonById?oid=${randomOid()}` }))]);
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
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
