// `npm run bench:start`: how long `npm start` takes until /readyz answers 200, as an operator meets it (the system's
// npm, its prestart, the compiled gateway on the embedded database).
//
// Restarts (the default): one embedded database in a temporary DATA_DIR, made by a first `npm start` that is not
// counted (it also compiles dist/ when src/ changed), then BENCH_RUNS (5) starts, each stopped by SIGTERM to npm and
// followed by a quiet machine. Prints each start's milliseconds to /readyz 200 and the CPU seconds npm and everything
// it started had used by then (steadier than the wall clock on a shared machine), then the medians.
// `BENCH_FIRST=1`: the first start of a fresh clone after `npm ci` instead: dist/ and console/dist/ removed (both are
// built again by it), a new DATA_DIR (created and migrated by it); BENCH_RUNS (1) such starts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasEnded, descendantsOf, startNpm, type NpmStart } from '../test/helpers/npm-start.js';
import { cpuSeconds, median, ROOT, runBench, settle } from './lib.js';

const FIRST = process.env.BENCH_FIRST === '1';
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? (FIRST ? 1 : 5)));
/** A restart's goal (issue 45); a first start compiles, so it has none. */
const RESTART_GOAL_MS = 2500;

/** CPU seconds of npm, its live descendants, and the children it already reaped (prestart). */
function npmCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return cpuSeconds(pid) + (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return Number.NaN;
  }
}

async function stop(npm: NpmStart): Promise<void> {
  const tree = descendantsOf(npm.proc.pid!);
  const exited = new Promise((r) => npm.proc.once('exit', r));
  npm.proc.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  if (!tree.every(hasEnded)) throw new Error('SIGTERM to npm left processes running');
  npm.kill();
}

async function timedStart(dataDir: string): Promise<{ ms: number; cpu: number }> {
  const npm = await startNpm({ DATA_DIR: dataDir }, 300_000);
  try {
    const ms = await npm.ready;
    return { ms, cpu: npmCpuSeconds(npm.proc.pid!) };
  } finally {
    await stop(npm);
  }
}

async function main(): Promise<void> {
  const parent = mkdtempSync(join(tmpdir(), 'bench-start-'));
  const runs: { ms: number; cpu: number }[] = [];
  try {
    if (!FIRST) {
      console.log('first start (not counted): creates the embedded database, compiles dist/ if stale');
      await timedStart(join(parent, 'data'));
    }
    for (let i = 0; i < RUNS; i++) {
      await settle(5000);
      if (FIRST) {
        rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
        rmSync(join(ROOT, 'console/dist'), { recursive: true, force: true });
      }
      const run = await timedStart(join(parent, FIRST ? `data-${i}` : 'data'));
      runs.push(run);
      console.log(`${FIRST ? 'first start' : 'restart'} ${i + 1}: ${run.ms.toFixed(0)} ms to /readyz 200, ${run.cpu.toFixed(2)} CPU s`);
    }
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
  console.log(
    `${FIRST ? 'first start of a fresh clone (dist/ and console/dist/ removed, new DATA_DIR)' : 'restart on an existing embedded database'}: median ${median(runs.map((r) => r.ms)).toFixed(0)} ms to /readyz 200 ` +
      `(min ${Math.min(...runs.map((r) => r.ms)).toFixed(0)}, max ${Math.max(...runs.map((r) => r.ms)).toFixed(0)}, ${runs.length} runs), median ${median(runs.map((r) => r.cpu)).toFixed(2)} CPU s`,
  );
  if (!FIRST) {
    const met = median(runs.map((r) => r.ms)) <= RESTART_GOAL_MS;
    console.log(`goal: the median restart <= ${RESTART_GOAL_MS} ms: ${met ? 'met' : 'NOT met'}`);
  }
}

runBench(main);
