import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { migratedPgliteTemplate } from './helpers/pglite-template.js';

// Once per test run, before any test file: the migrated embedded database every test copies (test/helpers/
// pglite-template.ts), and one directory for those copies, removed at the end even if a test forgot its own.

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
  project.provide('pgliteTemplate', await migratedPgliteTemplate());
  const runDir = mkdtempSync(join(tmpdir(), 'gw-test-run-'));
  project.provide('testRunDir', runDir);
  if (process.env.TEST_LOG_LEVEL === 'debug') console.log(`embedded database template ready in ${Math.round(performance.now() - started)} ms`);
  return () => rmSync(runDir, { recursive: true, force: true });
}
