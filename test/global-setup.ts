import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { migratedPgliteTemplate } from './helpers/pglite-template.js';
import { buildConsole } from '../scripts/build-console.mjs';

// Once per test run, before any test file: the migrated embedded database every test copies (test/helpers/
// pglite-template.ts), one directory for those copies, removed at the end even if a test forgot its own, and the
// operator console's assets (console/dist/, built when missing or stale), which every gateway serves at /console.

/**
 * The copies go to Linux's RAM-backed /dev/shm when it has room, else to the temporary directory. A copy is a whole
 * data directory, and PGlite then writes and syncs through the file system: on a disk that is kernel time for every
 * file and every sync, on tmpfs a copy in memory, so the two files that run side by side keep more of the two cores
 * for their own work. Room: several times what a run holds at its busiest (a copy a test forgot to drop stays until the
 * run ends), so that no gateway comes near its EMBEDDED_MIN_FREE_BYTES; a container's small /dev/shm falls back to
 * the disk.
 */
const RAM_DIR = '/dev/shm';
const RAM_DIR_MIN_FREE_BYTES = 1024 ** 3;

function runDirParent(): string {
  try {
    const s = statfsSync(RAM_DIR);
    if (Number(s.bavail) * Number(s.bsize) >= RAM_DIR_MIN_FREE_BYTES) return RAM_DIR;
  } catch {
    /* no /dev/shm on this system */
  }
  return tmpdir();
}

declare module 'vitest' {
  interface ProvidedContext {
    /** A migrated embedded database directory to copy (never to open). */
    pgliteTemplate: string;
    /** Where this run's embedded test databases live (RAM-backed when the machine has room). */
    testRunDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const started = performance.now();
  if (!buildConsole({ ifStale: true })) throw new Error('the console did not build (node scripts/build-console.mjs says why)');
  project.provide('pgliteTemplate', await migratedPgliteTemplate());
  const runDir = mkdtempSync(join(runDirParent(), 'gw-test-run-'));
  project.provide('testRunDir', runDir);
  if (process.env.TEST_LOG_LEVEL === 'debug') console.log(`embedded database template ready in ${Math.round(performance.now() - started)} ms`);
  return () => rmSync(runDir, { recursive: true, force: true });
}
