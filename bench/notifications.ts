// npm run bench:notifications (builds dist/ when stale, then runs this file):
//   1. accepted requests/s on POST /v1/systems/{systemId}/webhook (gateway in its own process, worker off), and
//      the peer: plain single-row INSERTs through `pg` into a similar table, same database server, loaded in
//      BENCH_ROUNDS (4) alternating bursts of BENCH_SECONDS / BENCH_ROUNDS each (so a slow spell of a shared host
//      falls on both alike),
//   2. end-to-end deliveries/s of those accepted records to a loopback HTTP sink (a gateway with the worker on).
// Prints figures and ratios. Needs PostgreSQL (TEST_POSTGRES_URL or postgresql://postgres@127.0.0.1:5432/test).
// The gateways run the compiled build (`node dist/main.js serve`, as `npm start`): what production runs.
// BENCH_GATEWAY_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) is passed to the accepting gateway's node.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import pg from 'pg';
import { freshDatabase } from '../test/helpers/databases.js';
import { median, runBench } from './lib.js';

interface CannonResult {
  requests: { average: number; total: number };
  /** Seconds the run took. */
  duration: number;
  latency: { p99: number };
  errors: number;
  non2xx: number;
  '2xx': number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (o: Record<string, unknown>) => Promise<CannonResult>;

const ROOT = resolve(import.meta.dirname, '..');
const BIN = resolve(ROOT, 'node_modules/.bin');
const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 4));

async function startGateway(env: Record<string, string>, nodeArgs: string[] = []): Promise<{ url: string; proc: ChildProcess; stop(): Promise<void> }> {
  const proc = spawn(process.execPath, [...nodeArgs, 'dist/main.js', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, PORT: '0', HOST: '127.0.0.1', AUTH: 'off', OUTBOUND_ALLOW: '127.0.0.1', LOG_LEVEL: 'info', GRAPHIQL: 'off', TASK_DISPATCHER: 'off', SCHEDULER: 'off', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((ok, fail) => {
    const lines = createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { url?: string };
        if (entry.url) {
          // From here on the log (a line per request) is drained unread: parsing it would load the bench, not the gateway.
          lines.close();
          proc.stdout!.resume();
          ok(entry.url);
        }
      } catch {
        /* not JSON */
      }
    });
    proc.once('exit', (code) => fail(new Error(`gateway exited with ${code}`)));
  });
  return { url, proc, stop: () => new Promise<void>((done) => (proc.once('exit', () => done()), proc.kill('SIGTERM'))) };
}

async function main(): Promise<void> {
  const db = await freshDatabase('postgres');
  let received = 0;
  const sink = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
  const client = new pg.Client({ connectionString: db.url });
  try {
    // 1. Acceptance and the peer's INSERTs, in alternating bursts.
    console.error('bench: acceptance and plain INSERTs, alternating…');
    await client.connect();
    const commits = async () =>
      Number((await client.query<{ n: string }>(`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()`)).rows[0]!.n);
    const commitsBefore = await commits();
    const nodeArgs = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    const accepting = await startGateway({ ...db.env, DELIVERY_WORKER: 'off' }, nodeArgs);
    // Made once the gateway has migrated the database (one commit, taken off the count below).
    await client.query(`CREATE TABLE bench_insert (LIKE "Notification" INCLUDING DEFAULTS INCLUDING INDEXES)`);
    // The webhook request each acceptance sends, and the payload each plain INSERT stores.
    const body = JSON.stringify({ url: sinkUrl, method: 'POST', body: { text: 'Your passport is ready' } });
    const acceptFor = (duration: number) =>
      autocannon({ url: `${accepting.url}/v1/systems/bench/webhook`, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: CONNECTIONS, duration });
    const pool = new pg.Pool({ connectionString: db.url, max: CONNECTIONS });
    // CONNECTIONS concurrent clients, each INSERTing one row at a time for `duration` seconds: how many, in how long.
    const insertFor = async (duration: number) => {
      let inserted = 0;
      const began = performance.now();
      const until = began + duration * 1000;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (performance.now() < until) {
            await pool.query(
              `INSERT INTO bench_insert (id, "incomingId", "systemId", channel, type, recipient, payload, status, "availableAt", "createTime", "updateTime")
               VALUES ($1, $2, 'bench', 'webhook', 'webhook', $3, $4, 'PENDING', now(), now(), now())`,
              [randomUUID(), randomUUID(), sinkUrl, body],
            );
            inserted += 1;
          }
        }),
      );
      return { inserted, seconds: (performance.now() - began) / 1000 };
    };
    const warm = await acceptFor(2);
    let insertedInAll = (await insertFor(1)).inserted;
    let accepted = 0;
    let acceptingSeconds = 0;
    let inserted = 0;
    let insertingSeconds = 0;
    const p99s: number[] = [];
    const accept = { non2xx: 0, errors: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const burst = await acceptFor(DURATION_S / ROUNDS);
      accepted += burst['2xx'];
      acceptingSeconds += burst.duration;
      accept.non2xx += burst.non2xx;
      accept.errors += burst.errors;
      p99s.push(burst.latency.p99);
      const rows = await insertFor(DURATION_S / ROUNDS);
      inserted += rows.inserted;
      insertingSeconds += rows.seconds;
      insertedInAll += rows.inserted;
    }
    await accepting.stop();
    await pool.end();
    const acceptedPerSecond = accepted / acceptingSeconds;
    const insertsPerSecond = inserted / insertingSeconds;
    const p99 = median(p99s);
    // The gateway's and the pool's connections are closed: their statistics are flushed. Each plain INSERT is one
    // commit of its own, and so is the CREATE TABLE; the gateway's start (migrations, LISTEN) is included in the rest.
    const commitsPerAccepted = (await commits()) - commitsBefore - insertedInAll - 1;

    // 2. Delivery of everything accepted (warm-up included), by one gateway process with the worker on.
    console.error(`bench: accepted ${accepted} (non-2xx ${accept.non2xx}, errors ${accept.errors}); delivering…`);
    const pending = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM "Notification" WHERE status = 'PENDING'`)).rows[0]!.n);
    const batch = process.env.DELIVERY_BATCH ?? '50';
    const started = performance.now();
    const delivering = await startGateway({ ...db.env, DELIVERY_BATCH: batch, DELIVERY_POLL_MS: '50' });
    const readyAt = performance.now();
    let delivered = 0;
    while (delivered < pending) {
      await new Promise((r) => setTimeout(r, 100));
      const counts = Object.fromEntries(
        (await client.query<{ status: string; n: string }>(`SELECT status, count(*) AS n FROM "Notification" GROUP BY status`)).rows.map((r) => [r.status, Number(r.n)]),
      );
      delivered = counts.DELIVERED ?? 0;
      if ((counts.FAILED ?? 0) + (counts.EXPIRED ?? 0) > 0) throw new Error(`deliveries failed: ${JSON.stringify(counts)}`);
    }
    const deliverSeconds = (performance.now() - readyAt) / 1000;
    await delivering.stop();
    const deliveredPerSecond = pending / deliverSeconds;
    void started;

    const rows = [
      ['accepted webhook requests/s (HTTP, 1 gateway process)', acceptedPerSecond, `p99 ${p99} ms (median of ${ROUNDS} bursts), non-2xx ${accept.non2xx}, errors ${accept.errors}`],
      [`end-to-end deliveries/s to a loopback sink (batch ${batch})`, deliveredPerSecond, `${pending} records in ${deliverSeconds.toFixed(1)} s, sink saw ${received}`],
      ['plain single-row INSERTs/s through pg (peer)', insertsPerSecond, `${CONNECTIONS} connections, in bursts alternating with the acceptance`],
      [
        'database commits per accepted request',
        commitsPerAccepted / (warm['2xx'] + accepted),
        `${commitsPerAccepted} commits for ${warm['2xx'] + accepted} requests (warm-up and gateway start included)`,
      ],
    ] as const;
    console.log(`\nnotifications benchmark (${DURATION_S} s, ${CONNECTIONS} connections, PostgreSQL ${db.url?.replace(/\/[^/]*$/, '/…')})`);
    for (const [name, value, note] of rows) console.log(`  ${name.padEnd(58)} ${value.toFixed(value < 10 ? 2 : 0).padStart(8)}   ${note}`);
    console.log(`  ratio accepted / INSERT                                       ${(acceptedPerSecond / insertsPerSecond).toFixed(2)}`);
    console.log(`  ratio delivered / INSERT                                      ${(deliveredPerSecond / insertsPerSecond).toFixed(2)}`);
  } finally {
    await client.end().catch(() => undefined);
    await new Promise<void>((r) => sink.close(() => r()));
    await db.drop();
  }
}

runBench(main);
