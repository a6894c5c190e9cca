import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import autocannon, { type Options } from 'autocannon';
import fc from 'fast-check';

// Shared by the benchmarks: servers in processes of their own (the load generator gets the other core), and one
// load tool.

export const ROOT = resolve(import.meta.dirname, '..');

export interface Child {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `script` (TypeScript through tsx, JavaScript with this Node, `nodeArgs` before it) and waits for a JSON line
 * on its stdout carrying `url` (the gateway's "gateway listening", a peer's {"url"}).
 */
export async function startChild(script: string, args: string[], env: Record<string, string>, nodeArgs: string[] = []): Promise<Child> {
  const [command, commandArgs] = script.endsWith('.ts') ? [resolve(ROOT, 'node_modules/.bin/tsx'), [...nodeArgs, script, ...args]] : [process.execPath, [...nodeArgs, script, ...args]];
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', OUTBOUND_ALLOW: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { url?: string };
        if (!entry.url) return;
        resolveUrl(entry.url);
        // From here on its output is only drained: parsing every access-log line would load the bench's own core.
        lines.close();
        child.stdout!.resume();
      } catch {
        /* not a log line */
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  return {
    url,
    process: child,
    stop: () =>
      new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The gateway as the Dockerfile runs it (compiled JavaScript, which the bench's npm script builds first, and
 * NODE_ENV=production): AUTH off on loopback, no workers unless asked.
 */
export function startGateway(env: Record<string, string>, nodeArgs: string[] = []): Promise<Child> {
  return startChild('dist/main.js', ['serve'], {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    AUTH: 'off',
    GRAPHIQL: 'off',
    TASK_DISPATCHER: 'off',
    SCHEDULER: 'off',
    DELIVERY_WORKER: 'off',
    ...env,
  }, nodeArgs);
}

/** A process's /proc/PID/stat, from its state field on (index 1 the parent, 11-14 utime, stime, cutime, cstime). */
function statFields(pid: number | string): string[] {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
}

/** utime + stime, in clock ticks. */
const ownTicks = (fields: string[]) => Number(fields[11]) + Number(fields[12]);

/** CPU seconds used so far by a process and its descendants (Linux /proc; NaN elsewhere): robust to a busy machine. */
export function cpuSeconds(pid: number): number {
  try {
    let ticks = ownTicks(statFields(pid));
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const child of children ? children.split(' ') : []) ticks += cpuSeconds(Number(child)) * 100;
    return ticks / 100;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU seconds used so far by the PostgreSQL server on this machine: every process named postgres, and the postmaster's
 * children that have exited (a peer's pool may close idle connections between runs). NaN when none runs here.
 */
export function postgresCpuSeconds(): number {
  let ticks = 0;
  let found = false;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      const fields = statFields(entry);
      const parent = readFileSync(`/proc/${fields[1]}/comm`, 'utf8').trim();
      ticks += ownTicks(fields);
      if (parent !== 'postgres') ticks += Number(fields[13]) + Number(fields[14]); // the postmaster: cutime, cstime
      found = true;
    } catch {
      /* the process ended meanwhile */
    }
  }
  return found ? ticks / 100 : Number.NaN;
}

/** Busy and total clock ticks of the whole machine so far (/proc/stat's first line; busy leaves out idle and iowait). */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

/**
 * Waits until the machine is idle: two 100 ms windows in a row under a tenth of its CPU, or maxMs. What one load leaves
 * behind (PostgreSQL's autovacuum of the rows it wrote, a process's garbage collection, a span exporter's last batch)
 * then runs before the next target's slice instead of inside it, where it would be counted as that target's price.
 * Returns the milliseconds waited.
 */
export async function settle(maxMs = 3000): Promise<number> {
  if (!existsSync('/proc/stat')) return 0;
  const started = performance.now();
  const deadline = started + maxMs;
  let quiet = 0;
  let last = machineTicks();
  while (quiet < 2 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = machineTicks();
    quiet = now.total > last.total && (now.busy - last.busy) / (now.total - last.total) < 0.1 ? quiet + 1 : 0;
    last = now;
  }
  return performance.now() - started;
}

/** The seed of a run's round orders (BENCH_SEED, default 1), printed by the benchmarks so that a run can be repeated. */
export const ROUND_SEED = Number(process.env.BENCH_SEED ?? 1);

/**
 * A new order of `items` for each of `rounds` rounds of an interleaved benchmark, drawn by fast-check from BENCH_SEED
 * (1), so that a run can be repeated. Turning a fixed order by one keeps every target between the same two neighbours
 * in every round; what one of them leaves behind (a busy PostgreSQL, a process collecting garbage) then falls on the
 * same target in every round, and no number of rounds averages it out.
 */
export function roundOrders<T>(items: readonly T[], rounds: number, seed = ROUND_SEED): T[][] {
  return fc.sample(fc.shuffledSubarray([...items], { minLength: items.length, maxLength: items.length }), { seed, numRuns: rounds });
}

/** The middle value (the lower of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

export async function load(name: string, options: Options): Promise<LoadResult> {
  const result = await autocannon({ connections: 16, duration: 10, ...options });
  return {
    name,
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

export function printTable(rows: LoadResult[], baseline: string): void {
  const base = rows.find((r) => r.name === baseline)!;
  console.log(`\n${'target'.padEnd(28)}${'req/s'.padStart(10)}${'p99 ms'.padStart(10)}${`vs ${baseline}`.padStart(16)}${'errors'.padStart(8)}`);
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(28)}${r.requestsPerSecond.toFixed(0).padStart(10)}${r.p99Ms.toFixed(1).padStart(10)}${(r.requestsPerSecond / base.requestsPerSecond).toFixed(3).padStart(16)}${String(r.errors + r.non2xx).padStart(8)}`,
    );
  }
}

/** Runs a bench's main and exits: 0 when it finished, 1 (with the error) when it threw. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
