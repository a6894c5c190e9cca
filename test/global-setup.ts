import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { migratedPgliteTemplate } from './helpers/pglite-template.js';
import { buildConsole } from '../scripts/build-console.mjs';

// Once per test run, before any test file: the migrated embedded database every test copies (test/helpers/
// pglite-template.ts), one directory for those copies, removed at the end even if a test forgot its own, and the
// operator console's assets (console/dist/, built when missing or stale), which every gateway serves at /console.

declare module 'vitest' {
  interface ProvidedContext {
    /** A migrated embedded database directory to copy (never to open). */
    pgliteTemplate: string;
    /** Where this run's embedded test databases live. */
    testRunDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const started = performance.now();
  if (!buildConsole({ ifStale: true })) throw new Error('the console did not build (node scripts/build-console.mjs says why)');
  project.provide('pgliteTemplate', await migratedPgliteTemplate());
  const runDir = mkdtempSync(join(tmpdir(), 'gw-test-run-'));
  project.provide('testRunDir', runDir);
  if (process.env.TEST_LOG_LEVEL === 'debug') console.log(`embedded database template ready in ${Math.round(performance.now() - started)} ms`);
  return () => rmSync(runDir, { recursive: true, force: true });
}
