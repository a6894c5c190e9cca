import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';

// A gateway as its own OS process (`node --import tsx src/main.ts serve`: tsx's loader in the gateway's own process,
// so that a signal sent to `proc` reaches the gateway itself, and one Node starts rather than tsx's two), for the
// tests that need several processes on one database or a process killed with SIGKILL.

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = resolve(ROOT, 'node_modules/.bin');

export interface GatewayProcess {
  proc: ChildProcess;
  /** Resolves with the base URL once the gateway logged that it listens. */
  url: Promise<string>;
  /** Every JSON log line it wrote to stdout so far. */
  logLines: Record<string, unknown>[];
  /** SIGTERM, then up to 10 s for it to exit. */
  stop(): Promise<void>;
}

/**
 * `nodeArgs`: more options for Node (a `--import` of a preload, such as test/helpers/shift-clock.mjs). `bundle`: run
 * the bundle `npm start` runs (dist/server/main.js, built by `node scripts/build.mjs`) instead of the source.
 */
export function startGatewayProcess(env: Record<string, string>, options: { nodeArgs?: string[]; bundle?: boolean } = {}): GatewayProcess {
  const entry = options.bundle ? ['dist/server/main.js'] : ['--import', 'tsx', 'src/main.ts'];
  // process.execPath: the project's Node, which runs vitest.
  const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry, 'serve'], {
    cwd: ROOT,
    env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', GRAPHIQL: 'off', AUTH: 'off', OUTBOUND_ALLOW: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const url = new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('gateway did not start within 30 s')), 30_000);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        child.logLines.push(entry);
        if (entry.msg?.startsWith('gateway listening') && entry.url) {
          clearTimeout(timer);
          resolveUrl(entry.url);
        }
      } catch {
        /* not a log line */
      }
    });
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited early (${code ?? signal}): ${stderr}`));
    });
  });
  url.catch(() => undefined);
  const child: GatewayProcess = {
    proc,
    url,
    logLines: [],
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
  return child;
}

/** `n` gateways on one database, started one after the other (the first applies the migrations). */
export async function startGatewayProcesses(n: number, env: Record<string, string>): Promise<{ children: GatewayProcess[]; urls: string[] }> {
  const children: GatewayProcess[] = [];
  const urls: string[] = [];
  for (let i = 0; i < n; i++) {
    const child = startGatewayProcess(env);
    children.push(child);
    urls.push(await child.url);
  }
  return { children, urls };
}
