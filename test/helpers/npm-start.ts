import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { freePort } from './ports.js';

// `npm start` as an operator runs it (the system's npm, its prestart, the compiled gateway), for the tests and the
// bench that measure or stop it: how long until /readyz answers 200, and whether the processes it started are gone
// after a signal to npm's own pid. Linux: the process tree is read from /proc.

const ROOT = resolve(import.meta.dirname, '../..');

export interface NpmStart {
  /** npm itself: a process group of its own, so that what is left of it can be killed whole. */
  proc: ChildProcess;
  url: string;
  /** Everything npm and the gateway wrote so far. */
  output(): string;
  /** Milliseconds from the spawn of npm until /readyz answered 200; rejects when npm exits first or after `timeoutMs`. */
  ready: Promise<number>;
  /** SIGKILL to the whole process group (what a test leaves behind). */
  kill(): void;
}

/** Runs `npm start` on a free loopback port with `env` (DATA_DIR, AUTH, ...) over the test process's environment. */
export async function startNpm(env: Record<string, string>, timeoutMs = 120_000): Promise<NpmStart> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const started = performance.now();
  const proc = spawn('npm', ['start'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', AUTH: 'off', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<never>((_, reject) => proc.once('exit', (code, signal) => reject(new Error(`npm start exited (${code ?? signal}) before /readyz answered 200:\n${output.slice(-3000)}`))));
  exited.catch(() => undefined);
  const ready = (async () => {
    while (performance.now() - started < timeoutMs) {
      if ((await readyz(url)) === 200) return performance.now() - started;
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10))]);
    }
    throw new Error(`npm start: /readyz did not answer 200 within ${timeoutMs} ms:\n${output.slice(-3000)}`);
  })();
  ready.catch(() => undefined);
  return {
    proc,
    url,
    output: () => output,
    ready,
    kill() {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        /* the group is gone */
      }
    },
  };
}

/** /readyz's status, or 0 when nothing answers on the port. */
export async function readyz(url: string): Promise<number> {
  try {
    const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** Every live process below `pid` (children, their children, ...), from /proc. */
export function descendantsOf(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((child) => [child, ...descendantsOf(child)]);
}

/** Whether `pid` has ended (a zombie waiting for its parent counts as ended). */
export function hasEnded(pid: number): boolean {
  if (!existsSync(`/proc/${pid}`)) return true;
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return true;
  }
}

/** The command line of a process (`node dist/main.js serve`), or '' once it has ended. */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}
