// The operator console (console/, a React front end): its typed operations generated from schema.graphql
// (console/codegen.ts, run by scripts/generate.mjs with the other generators), type-checked (console/tsconfig.json),
// then bundled by Vite into console/dist/, which the
// gateway serves at /console (src/edge/plugins/use-console.ts), with the console's manifest of trusted documents
// (codegen's persisted-documents.json) beside it: the gateway trusts it whenever it serves the console, and the
// console sends every operation by its id. console/dist/ is build output, never committed.
// Run by `npm run build` (scripts/build.mjs), before `npm test` and by the test run's global set-up, so a fresh
// clone serves the console without a step of its own. `--if-stale`: nothing when console/dist/ was built from
// exactly these inputs (a stamp in it holds their hash); about 5 s otherwise.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
const CONSOLE = join(ROOT, 'console');
const DIST = join(CONSOLE, 'dist');
const STAMP = join(DIST, '.inputs.sha256');
const BIN = join(ROOT, 'node_modules/.bin');
/** Besides console/ itself (its output and generated code excepted): the contract and the locked tool versions. */
const INPUT_FILES = ['schema.graphql', 'package-lock.json', 'scripts/build-console.mjs'];
const SKIPPED = ['console/dist/', 'console/src/gql/'];

function consoleFiles() {
  return readdirSync(CONSOLE, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .filter((f) => !SKIPPED.some((s) => f.startsWith(s)))
    .sort();
}

function inputsHash() {
  const hash = createHash('sha256');
  for (const f of [...INPUT_FILES, ...consoleFiles()]) {
    const abs = join(ROOT, f);
    hash.update(`${f}\0${existsSync(abs) ? readFileSync(abs).toString('base64') : '-'}\0`);
  }
  return hash.digest('hex');
}

/** Builds console/dist/ unless (`ifStale`) it was built from the same inputs; false when a step failed (it says which). */
export function buildConsole({ ifStale = false } = {}) {
  // The typed documents (console/src/gql/), made by the generators when their inputs changed.
  const generated = spawnSync(process.execPath, [join(ROOT, 'scripts/generate.mjs')], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (generated.status !== 0) return false;
  const hash = inputsHash();
  if (ifStale && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash && existsSync(join(DIST, 'index.html'))) return true;
  const started = performance.now();
  rmSync(STAMP, { force: true });
  // The tools' own `#!/usr/bin/env node` must find the project's Node (the `node` devDependency). NODE_ENV is set:
  // under a test run it is `test`, and Vite would then bundle React's development build.
  const env = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, NODE_ENV: 'production' };
  const steps = [
    ['tsc', ['-p', 'tsconfig.json']],
    ['vite', ['build', '--config', 'vite.config.ts']],
  ];
  for (const [cmd, args] of steps) {
    const run = spawnSync(join(BIN, cmd), args, { cwd: CONSOLE, stdio: ['ignore', 'inherit', 'inherit'], env });
    if (run.status !== 0) {
      console.error(`build-console: ${cmd} ${args.join(' ')} failed (${run.error ? run.error.message : `exit ${run.status}`}); console/dist/ was not updated.`);
      return false;
    }
  }
  // The manifest of the documents this bundle sends (written by codegen with the typed documents it was built from).
  copyFileSync(join(CONSOLE, 'src/gql/persisted-documents.json'), join(DIST, 'persisted-documents.json'));
  writeFileSync(STAMP, hash);
  if (ifStale) console.error(`build-console: console/dist/ built (${((performance.now() - started) / 1000).toFixed(1)} s).`);
  return true;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exit(buildConsole({ ifStale: process.argv.includes('--if-stale') }) ? 0 : 1);
}
