import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import autocannon, { type Options } from 'autocannon';

// Shared by the benchmarks: a gateway in its own process (the load generator gets the other core), and one load tool.

export const ROOT = resolve(import.meta.dirname, '..');

export interface Child {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `tsx <script> ...args` and waits for a JSON log line carrying `url` (the gateway's "gateway listening"). */
export async function startChild(script: string, args: string[], env: Record<string, string>): Promise<Child> {
  const child = spawn(resolve(ROOT, 'node_modules/.bin/tsx'), [script, ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', OUTBOUND_ALLOW: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { url?: string };
        if (entry.url) resolveUrl(entry.url);
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
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
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
