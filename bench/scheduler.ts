// npm run bench:scheduler  (= tsx bench/scheduler.ts)
//
// 1,000 jobs firing every second for 30 s against gateway processes sharing one fresh PostgreSQL database; an HTTP
// sink in this process receives the firings. Prints p50/p99 lateness of the firings against their scheduled time
// (when the instance was fired, and when the HTTP request reached the sink) and the count of missed and doubled
// firings. Knobs: BENCH_JOBS (1000), BENCH_SECONDS (30), BENCH_PROCESSES (2), TEST_POSTGRES_URL, BENCH_NODE_OPTIONS
// (NODE_OPTIONS of the gateway processes, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import pg from 'pg';
import { freshDatabase } from '../test/helpers/databases.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 2);
const ROOT = resolve(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function startGateway(env: Record<string, string>): Promise<{ proc: ChildProcess; url: string }> {
  // node --import tsx: one process per gateway (the tsx CLI would add a relay process in front of each).
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', AUTH: 'off', OUTBOUND_ALLOW: '127.0.0.1', TASK_DISPATCHER: 'off', DELIVERY_WORKER: 'off', LOG_LEVEL: 'info', GRAPHIQL: 'off', ...(process.env.BENCH_NODE_OPTIONS && { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS }), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((ok, fail) => {
    proc.once('exit', (code) => fail(new Error(`gateway exited with ${code}`)));
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string; level?: number };
        if (entry.msg?.startsWith('gateway listening') && entry.url) ok(entry.url);
        else if ((entry.level ?? 0) >= 40) console.error('[gateway]', line);
      } catch {
        /* ignore */
      }
    });
  });
  return { proc, url };
}

async function rpc(url: string, method: string, params: unknown): Promise<{ result?: unknown; error?: unknown }> {
  const res = await fetch(`${url}/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }) });
  return (await res.json()) as { result?: unknown; error?: unknown };
}

async function main(): Promise<void> {
  // The sink: one record per request, keyed by job and scheduled time.
  const hits: { key: string; lateness: number }[] = [];
  const sink = createServer((req, res) => {
    const at = Date.now();
    const job = String(req.headers['x-scheduler-job-name']);
    const scheduled = String(req.headers['x-scheduler-schedule-time']);
    req.resume();
    req.on('end', () => {
      hits.push({ key: `${job}@${scheduled}`, lateness: at - Date.parse(scheduled) });
      res.writeHead(204).end();
    });
  });
  sink.keepAliveTimeout = 60_000;
  await new Promise<void>((ok) => sink.listen(0, '127.0.0.1', ok));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hit`;

  const db = await freshDatabase('postgres');
  const gateways: { proc: ChildProcess; url: string }[] = [];
  try {
    for (let i = 0; i < PROCESSES; i++) gateways.push(await startGateway(db.env)); // the first migrates
    console.log(`${PROCESSES} gateway process(es) up; creating ${JOBS} jobs '* * * * * *' ...`);
    let created = 0;
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = w; i < JOBS; i += 16) {
          const r = await rpc(gateways[i % gateways.length]!.url, 'create', { name: `bench.${String(i).padStart(4, '0')}`, schedule: '* * * * * *', target: { http: { url: sinkUrl } } });
          if (r.error) throw new Error(JSON.stringify(r.error));
          created += 1;
        }
      }),
    );
    const t0 = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    const t1 = t0 + SECONDS * 1000;
    console.log(`${created} jobs created; measuring occurrences in [${new Date(t0).toISOString()}, ${new Date(t1).toISOString()}) ...`);
    await sleep(t1 - Date.now() + 3000);

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ job: string; scheduled: number; started: number; status: string; misfire: string | null }>(
      `SELECT "jobName" AS job, (extract(epoch FROM "scheduledTime" AT TIME ZONE 'UTC') * 1000)::float8 AS scheduled,
              (extract(epoch FROM "startTime" AT TIME ZONE 'UTC') * 1000)::float8 AS started, status::text, misfire::text
       FROM "JobInstance" WHERE trigger = 'SCHEDULE'
         AND "scheduledTime" >= to_timestamp($1 / 1000.0) AT TIME ZONE 'UTC' AND "scheduledTime" < to_timestamp($2 / 1000.0) AT TIME ZONE 'UTC'`,
      [t0, t1],
    );
    await client.end();

    const expected = JOBS * SECONDS;
    const dbKeys = new Set(rows.map((r) => `${r.job}@${r.scheduled}`));
    const fireLate = rows.map((r) => r.started - r.scheduled).sort((a, b) => a - b);
    const inWindow = hits.filter((h) => {
      const at = Date.parse(h.key.split('@')[1]!);
      return at >= t0 && at < t1;
    });
    const sinkKeys = new Set(inWindow.map((h) => h.key));
    const deliveryLate = inWindow.map((h) => h.lateness).sort((a, b) => a - b);
    const statuses: Record<string, number> = {};
    for (const r of rows) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    const misfired = rows.filter((r) => r.misfire !== null).length;

    console.log(`\nscheduler bench: ${JOBS} jobs x ${SECONDS} s, ${PROCESSES} gateway process(es), PostgreSQL, ${(await import('node:os')).cpus().length} cores`);
    console.log(`expected firings           ${expected}`);
    console.log(`instances (db)             ${rows.length}   missed ${expected - dbKeys.size}   doubled ${rows.length - dbKeys.size}   misfired ${misfired}   ${JSON.stringify(statuses)}`);
    console.log(`HTTP deliveries (sink)     ${inWindow.length}   missed ${expected - sinkKeys.size}   doubled ${inWindow.length - sinkKeys.size}`);
    console.log(`lateness fired  (ms)       p50 ${percentile(fireLate, 50)}   p99 ${percentile(fireLate, 99)}   max ${fireLate.at(-1)}`);
    console.log(`lateness at sink (ms)      p50 ${percentile(deliveryLate, 50)}   p99 ${percentile(deliveryLate, 99)}   max ${deliveryLate.at(-1)}`);
    const exact = expected === dbKeys.size && rows.length === dbKeys.size && expected === sinkKeys.size && inWindow.length === sinkKeys.size;
    const verdict = (late: number[]) => (percentile(late, 99) < 250 && exact ? 'MET' : 'NOT MET');
    console.log(`goal p99 < 250 ms, 0 missed, 0 doubled: firing ${verdict(fireLate)}; HTTP delivery ${verdict(deliveryLate)}`);
    console.log(`load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await Promise.all(
      gateways.map(async ({ proc }) => {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await Promise.race([exited, sleep(15_000)]);
      }),
    );
    sink.closeAllConnections();
    sink.close();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
