// npm run bench:tasks  (= npm run generate && tsx bench/tasks.ts)
//
// Task throughput against a named peer, both measured in this run on the same PostgreSQL server (TEST_POSTGRES_URL or
// postgresql://postgres@127.0.0.1:5432/test), each on its own fresh database dropped at the end:
//   ours  the gateway in this process (task dispatcher only: SCHEDULER and DELIVERY_WORKER off) runs BENCH_TASKS
//         (5000) tasks of one queue of rate 100 to SUCCEEDED. Each task is a real HTTP request to a loopback target in
//         this process that answers 200 at once, then the claim/settle statements, leases and NOTIFYs of the dispatcher.
//         Tasks are created (untimed, 16 JSON-RPC calls at a time) in the paused queue; the clock runs from
//         /resumeQueue until /getTasksSummary counts every task SUCCEEDED. It is asked every 500 ms while tasks run (to
//         fail fast), then, once the target has received all N requests, every 2 ms: a 50 ms poll all along cost the
//         gateway CPU the peer never pays and added up to 50 ms to its time (the peer's clock stops at its last
//         job:success event, emitted before that job's completion is even written).
//   peer  graphile-worker (dev dependency, benchmark only), in this process too, runs the same number of jobs whose task is a no-op
//         function: no HTTP request, just its own job fetch/complete statements. Jobs are added in bulk (untimed); the
//         clock runs from run() (migrations already applied) until every job emitted job:success.
// Warm-up: before either clock, each side runs BENCH_WARMUP (1000) tasks / jobs exactly as above, untimed, on databases
// of their own that are then dropped, so both timed runs find the process's code warm. Without it the gateway ran
// first, cold (JIT, the first HTTP requests), and warmed node-postgres for the peer, which ran second.
// Same parallelism on both sides: queue rate 100 = graphile-worker concurrency 100; both use a pg pool of the
// node-postgres default (10). Prints tasks/s of each, the ratio ours/peer and whether the goal (ratio >= 1) is met.
// Exits 0 whatever the ratio; non-zero only on errors (a task not SUCCEEDED, a failed job, no progress for 60 s).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Logger, makeWorkerUtils, run } from 'graphile-worker';
import pg from 'pg';
import { freshDatabase } from '../test/helpers/databases.js';
import { rpc, startTestGateway } from '../test/helpers/gateway.js';

const N = Number(process.env.BENCH_TASKS ?? 5000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);
const RATE = 100;
const CREATE_CONCURRENCY = 16;
const POLL_MS = 500;
const TAIL_POLL_MS = 2;
const STALL_MS = 60_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Result {
  name: string;
  seconds: number;
  /** From the start of the clock to the first task/job starting. */
  firstStartMs: number;
  note: string;
}

/** A JSON-RPC call that must succeed; answers its result. */
async function call<T>(url: string, method: string, params: unknown): Promise<T> {
  const { status, body } = await rpc(url, method, params);
  if (status !== 200 || body?.error) throw new Error(`${method}: HTTP ${status} ${JSON.stringify(body)}`);
  return body.result as T;
}

async function ours(n: number): Promise<Result> {
  let hits = 0;
  let firstHitAt = 0;
  let allHit!: () => void;
  const allHitNow = new Promise<void>((r) => (allHit = r));
  const target = http.createServer((req, res) => {
    if (hits++ === 0) firstHitAt = performance.now();
    if (hits === n) allHit();
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  target.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
  const gw = await startTestGateway('postgres', { SCHEDULER: 'off', DELIVERY_WORKER: 'off', TASK_CONCURRENCY: '200', GRAPHIQL: 'off' });
  try {
    await call(gw.url, 'createQueue', { name: 'bench', rate: RATE });
    await call(gw.url, 'pauseQueue', { name: 'bench' });
    console.error(`bench: creating ${n} tasks…`);
    let next = 0;
    await Promise.all(
      Array.from({ length: CREATE_CONCURRENCY }, async () => {
        for (let i = next++; i < n; i = next++) await call(gw.url, 'createTask', { queueName: 'bench', name: `t${i}`, target: { url: targetUrl } });
      }),
    );
    console.error('bench: running tasks…');
    const started = performance.now();
    await call(gw.url, 'resumeQueue', { name: 'bench' });
    let summary: Record<string, number> = {};
    let progressAt = started;
    let targetDone = false;
    void allHitNow.then(() => (targetDone = true));
    for (let last = -1; (summary.SUCCEEDED ?? 0) < n; ) {
      if (targetDone) await sleep(TAIL_POLL_MS);
      else await Promise.race([allHitNow, sleep(POLL_MS)]);
      summary = await call<Record<string, number>>(gw.url, 'getTasksSummary', { queueName: 'bench' });
      if ((summary.FAILED ?? 0) + (summary.CANCELLED ?? 0) > 0) throw new Error(`tasks did not succeed: ${JSON.stringify(summary)}`);
      const progress = (summary.SUCCEEDED ?? 0) + hits;
      if (progress !== last) [last, progressAt] = [progress, performance.now()];
      else if (performance.now() - progressAt > STALL_MS) throw new Error(`no progress for ${STALL_MS / 1000} s: ${JSON.stringify(summary)}`);
    }
    const seconds = (performance.now() - started) / 1000;
    if (hits !== n) throw new Error(`the loopback target saw ${hits} requests for ${n} tasks`);
    return { name: 'gateway tasks (HTTP request each)', seconds, firstStartMs: firstHitAt - started, note: `target saw ${hits} requests` };
  } finally {
    await gw.close();
    target.closeAllConnections();
    await new Promise<void>((r) => target.close(() => r()));
  }
}

async function peer(n: number): Promise<Result> {
  const db = await freshDatabase('postgres');
  const logger = new Logger(() => () => undefined);
  // Our own pool (node-postgres default size, as graphile-worker would make): graphile-worker does not await the end
  // of a pool it made itself, and dropping the database under its closing connections crashed the process.
  const pool = new pg.Pool({ connectionString: db.url });
  pool.on('error', () => undefined).on('connect', (client) => client.on('error', () => undefined));
  try {
    const utils = await makeWorkerUtils({ pgPool: pool, logger });
    try {
      await utils.migrate();
      console.error(`bench: adding ${n} graphile-worker jobs…`);
      await utils.addJobs(Array.from({ length: n }, () => ({ identifier: 'noop', payload: {} })));
    } finally {
      await utils.release();
    }
    console.error('bench: running graphile-worker jobs…');
    let done = 0;
    let firstStartAt = 0;
    let settle!: (error?: Error) => void;
    const finished = new Promise<void>((ok, fail) => (settle = (error) => (error ? fail(error) : ok())));
    const started = performance.now();
    const runner = await run({
      pgPool: pool,
      concurrency: RATE,
      noHandleSignals: true,
      pollInterval: 1000,
      logger,
      taskList: { noop: async () => undefined },
    });
    try {
      runner.events.on('job:start', () => void (firstStartAt ||= performance.now()));
      runner.events.on('job:success', () => void (++done === n && settle()));
      runner.events.on('job:error', ({ error }) => settle(new Error(`a graphile-worker job failed: ${String(error)}`)));
      let last = -1;
      const watchdog = setInterval(() => {
        if (done !== last) last = done;
        else settle(new Error(`graphile-worker: no progress for ${STALL_MS / 1000} s (${done}/${n} jobs done)`));
      }, STALL_MS);
      await finished.finally(() => clearInterval(watchdog));
      const seconds = (performance.now() - started) / 1000;
      return { name: 'graphile-worker 0.17.3 (no-op jobs)', seconds, firstStartMs: firstStartAt - started, note: `${done} job:success` };
    } finally {
      await runner.stop();
    }
  } finally {
    await pool.end();
    await db.drop();
  }
}

async function main(): Promise<void> {
  if (WARMUP > 0) {
    console.error(`bench: warm-up, untimed: ${WARMUP} tasks, then ${WARMUP} jobs, each on a database of its own`);
    await ours(WARMUP);
    await peer(WARMUP);
  }
  const mine = await ours(N);
  const theirs = await peer(N);
  const rate = (r: Result) => N / r.seconds;
  const ratio = rate(mine) / rate(theirs);
  console.log(`\ntasks benchmark: ${N} tasks, queue rate / concurrency ${RATE}, PostgreSQL, ${cpus().length} cores`);
  for (const r of [mine, theirs]) {
    console.log(`  ${`${r.name} tasks/s`.padEnd(52)} ${rate(r).toFixed(0).padStart(8)}   ${r.seconds.toFixed(2)} s, first start after ${r.firstStartMs.toFixed(0)} ms, ${r.note}`);
  }
  console.log(`  ${'ratio gateway / graphile-worker'.padEnd(52)} ${ratio.toFixed(2).padStart(8)}`);
  console.log(`  goal: ratio >= 1.0 — ${ratio >= 1 ? 'met' : 'not met'}`);
  console.log(`  load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
