// Runs every code generator the build needs, offline: after `npm ci` (postinstall) and before each entry point
// (pre-scripts), so a fresh clone needs no extra step. When nothing it reads changed since the last run it does
// nothing (a stamp in src/generated/ holds the hash of its inputs); `--force` generates anyway.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'node_modules/.bin');
const STAMP = join(ROOT, 'src/generated/.inputs.sha256');

/** What the generators read: the Prisma schema and config, the GraphQL contract and every operation document
 * (src/ and test/ are walked, so a new folder of documents counts; the console's are in its sources), the locked
 * generator versions, this script. */
const INPUT_FILES = ['prisma.config.ts', 'codegen.ts', 'console/codegen.ts', 'schema.graphql', 'package-lock.json', 'scripts/generate.mjs'];
const INPUT_TREES = [
  { dir: 'prisma/schema', ext: '.prisma' },
  { dir: 'src', ext: '.graphql', skip: 'src/generated' },
  { dir: 'test', ext: '.graphql' },
  // The console's operations are written inside its TypeScript (graphql(`...`)).
  { dir: 'console/src', ext: '.ts', skip: 'console/src/gql' },
  { dir: 'console/src', ext: '.tsx' },
];
/** One file of each generator's output: a deleted output means generating again, whatever the stamp says. */
/** The console's sources are absent where only the server is built (the image's first `npm ci` layer). */
const HAS_CONSOLE = existsSync(join(ROOT, 'console/codegen.ts'));
const OUTPUTS = ['src/generated/prisma/client.ts', 'src/generated/pothos-types.ts', 'src/generated/graphql/index.ts', ...(HAS_CONSOLE ? ['console/src/gql/index.ts', 'console/src/gql/persisted-documents.json'] : [])];

const GENERATORS = [
  ['prisma', ['generate']],
  ['graphql-codegen', ['--config', 'codegen.ts', '--silent']],
  ...(HAS_CONSOLE ? [['graphql-codegen', ['--config', 'console/codegen.ts', '--silent']]] : []),
];

function filesUnder(dir, ext, skip) {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(ext))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .filter((f) => !skip || !f.startsWith(skip));
}

function inputsHash() {
  const files = [...INPUT_FILES, ...INPUT_TREES.flatMap((t) => filesUnder(t.dir, t.ext, t.skip))].sort();
  const hash = createHash('sha256');
  for (const f of files) {
    const abs = join(ROOT, f);
    hash.update(`${f}\0${existsSync(abs) ? readFileSync(abs).toString('base64') : '-'}\0`);
  }
  return hash.digest('hex');
}

const force = process.argv.includes('--force');
const hash = inputsHash();
const upToDate = !force && OUTPUTS.every((f) => existsSync(join(ROOT, f))) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash;
if (!upToDate) {
  // A run that fails halfway must not leave a stamp that says the half is complete.
  rmSync(STAMP, { force: true });
  // `prisma generate` needs no schema engine, but the CLI tries to download one unless this names an existing file.
  // The generators' own `#!/usr/bin/env node` must find the project's Node (the `node` devDependency), not the system's.
  const env = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, PRISMA_SCHEMA_ENGINE_BINARY: process.execPath, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
  for (const [cmd, args] of GENERATORS) {
    const r = spawnSync(join(BIN, cmd), args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], env });
    if (r.status !== 0) {
      console.error(`generate: ${cmd} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`})`);
      process.exit(r.status || 1);
    }
  }
  writeFileSync(STAMP, hash);
}
