// `npm run bench:heap-tuning`: the gateway as it starts (V8's allocation-site pretenuring off, src/runtime/heap-tuning.ts)
// against the same build started with `node --allocation-site-pretenuring` (V8's default kept), side by side in one run.
//
// One fresh PostgreSQL database (BENCH_POSTGRES_URL, default the test server) holding 60,000 queues; both gateways as
// the Dockerfile runs them (compiled, NODE_ENV=production, AUTH off, no workers), traced too when BENCH_OTLP_URL names
// an OTLP/HTTP receiver. Each phase of BENCH_PHASES (default write:3,list:3,one-off:3,read:3, kind:seconds) loads one
// gateway then the other, in BENCH_ROUNDS (3) rounds, the order turning each round; the phases run in that order in
// every round, so each process sees its traffic change as a long-running one does (which site V8 pretenures depends on
// what ran before). Kinds: write (createQueue, a new name each), list (a page of 50 without its total), one-off (a
// queue by a name written into the query's text), read (a queue by a name passed as a variable).
// Prints req/s and server CPU per request for each kind and gateway, and the ratio tuned / V8's default.
import autocannon from 'autocannon';
import pg from 'pg';
import { openDatabase } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { freshDatabase } from '../test/helpers/databases.js';
import { GENERATE_QUEUES, QUEUE_FIELDS as QUEUE, randomQueueName } from './fixtures.js';
import { cpuSeconds, runBench, startGateway, type Child } from './lib.js';

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const PHASES = (process.env.BENCH_PHASES ?? 'write:3,list:3,one-off:3,read:3').split(',').map((phase) => {
  const [kind, seconds] = phase.split(':');
  return { kind: kind!, seconds: Number(seconds ?? 3) };
});
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const QUEUES = 60_000;

type Target = 'tuned' | "V8's default";
let written = 0;
const randomQueue = () => randomQueueName(QUEUES);
const BODIES: Record<string, () => string> = {
  write: () => JSON.stringify({ query: `mutation($name: String!) { createQueue(input: { name: $name, rate: 3, labels: ["bench"] }) { ${QUEUE} } }`, variables: { name: `w-${++written}` } }),
  list: () => JSON.stringify({ query: `{ queues(first: 50, orderBy: NAME_ASC) { nodes { ${QUEUE} } pageInfo { hasNextPage } } }` }),
  'one-off': () => JSON.stringify({ query: `{ queue(name: "${randomQueue()}") { ${QUEUE} } }` }),
  read: () => JSON.stringify({ query: `query($name: String!) { queue(name: $name) { ${QUEUE} } }`, variables: { name: randomQueue() } }),
};

async function main(): Promise<void> {
  for (const { kind } of PHASES) if (!BODIES[kind]) throw new Error(`unknown phase kind ${kind} (write, list, one-off, read)`);
  const db = await freshDatabase('postgres', ADMIN_URL);
  const gateways: Partial<Record<Target, Child>> = {};
  try {
    const database = await openDatabase({ databaseUrl: db.url, dataDir: 'unused' });
    await applyMigrations(database.adapterFactory);
    await database.close();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(GENERATE_QUEUES, [QUEUES]);
    await client.query('ANALYZE');
    await client.end();
    const env = { DATABASE_URL: db.url, MIGRATE_ON_START: 'off', ...(process.env.BENCH_OTLP_URL ? { OTEL_EXPORTER_OTLP_ENDPOINT: process.env.BENCH_OTLP_URL } : {}) };
    gateways.tuned = await startGateway(env);
    gateways["V8's default"] = await startGateway(env, ['--allocation-site-pretenuring']);
    const totals = new Map<string, { requests: number; seconds: number; cpu: number }>();
    for (let round = 0; round < ROUNDS; round++) {
      console.error(`bench: round ${round + 1} of ${ROUNDS}`);
      for (const { kind, seconds } of PHASES) {
        const order: Target[] = round % 2 ? ["V8's default", 'tuned'] : ['tuned', "V8's default"];
        for (const target of order) {
          const gateway = gateways[target]!;
          const pid = gateway.process.pid!;
          const before = cpuSeconds(pid);
          const result = await autocannon({
            url: gateway.url,
            connections: 16,
            duration: seconds,
            requests: [{ setupRequest: (req) => ({ ...req, method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: BODIES[kind]!() }) }],
          });
          if (result.errors || result.non2xx || result.timeouts) throw new Error(`${target}, ${kind}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
          const total = totals.get(`${kind}|${target}`) ?? { requests: 0, seconds: 0, cpu: 0 };
          total.requests += result.requests.total;
          total.seconds += result.duration;
          total.cpu += cpuSeconds(pid) - before;
          totals.set(`${kind}|${target}`, total);
        }
      }
    }
    console.log(`\nbench:heap-tuning: ${ROUNDS} rounds of ${PHASES.map((p) => `${p.kind} ${p.seconds} s`).join(', ')} per gateway, 16 connections${process.env.BENCH_OTLP_URL ? ', traced' : ''}, Node ${process.version}\n`);
    console.log("| phase | target | req/s | server CPU ms/req | vs V8's default |");
    console.log('|---|---|---:|---:|---:|');
    for (const kind of new Set(PHASES.map((p) => p.kind))) {
      const of = (target: Target) => totals.get(`${kind}|${target}`)!;
      const base = of("V8's default");
      for (const target of ['tuned', "V8's default"] as Target[]) {
        const t = of(target);
        console.log(`| ${kind} | ${target} | ${(t.requests / t.seconds).toFixed(0)} | ${((t.cpu * 1000) / t.requests).toFixed(3)} | ${(t.requests / t.seconds / (base.requests / base.seconds)).toFixed(2)}x |`);
      }
    }
  } finally {
    await Promise.all(Object.values(gateways).map((gateway) => gateway.stop()));
    await db.drop();
  }
}

runBench(main);
