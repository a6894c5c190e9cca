// `npm run build`: the generators (generate.mjs, which does nothing when its inputs did not change), then tsc with
// tsconfig.build.json: src/ compiled to dist/ as the same tree (src/db/migrations.ts -> dist/db/migrations.js), so a
// path a module computes from import.meta.dirname ('../..' = the repository) is the same from src/ and from dist/.
// A type error fails the build and emits nothing. The operator console (console/) is built first, by
// scripts/build-console.mjs, into console/dist/. Every other file of src/ (client.browser.js, the .graphql
// documents) is copied beside its module; a dist/ file whose source is gone is removed. Last, dist/main.js and what it
// imports are bundled into dist/server/ (scripts/bundle-server.mjs), which `npm start` runs.
// `--if-stale` (prestart): nothing when dist/ was built from exactly these inputs (a stamp in dist/ holds their hash).
// Before any of that, and before the generators' and the console's scripts are even loaded, `--if-stale` compares the
// size and modification time of every file the three steps read with what they were when the last run found all of
// them up to date (dist/.inputs.stat): unchanged, it is done in a few milliseconds (every `npm start` pays for it).
// Anything else, a touched file included, goes the way above, by content, and writes them down again.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.inputs.sha256');
const STATS = join(DIST, '.inputs.stat');
const BUILD_INFO = join(DIST, '.tsbuildinfo');
/** Besides every file of src/ (generated code included): what decides how tsc compiles it. */
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/build.mjs', 'scripts/bundle-server.mjs'];

const filesUnder = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => relative(dir, join(e.parentPath, e.name)))
        .sort()
    : [];

function inputsHash() {
  const hash = createHash('sha256');
  for (const f of [...INPUT_FILES, ...filesUnder(SRC).map((f) => join('src', f))]) {
    const abs = join(ROOT, f);
    hash.update(`${f}\0${existsSync(abs) ? readFileSync(abs).toString('base64') : '-'}\0`);
  }
  return hash.digest('hex');
}

/** Files of src/ that tsc does not compile but the code may read at run time; dot-files (stamps) excepted. */
const isAsset = (f) => !f.endsWith('.ts') && !f.split('/').some((part) => part.startsWith('.'));

/** The dist/ file(s) a file of src/ becomes. */
const outputsOf = (f) => (f.endsWith('.d.ts') ? [] : f.endsWith('.ts') ? [f.replace(/\.ts$/, '.js')] : isAsset(f) ? [f] : []);

/**
 * Path, size and modification time of what the generators (generate.mjs), the console's build (build-console.mjs) and
 * this script read, and of what they leave: more than each of them reads (all of scripts/, console/, prisma/), never
 * less. The outputs count too, so that a removed dist/main.js or console/dist/ is noticed.
 */
function inputStats() {
  const files = [
    ...['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'prisma.config.ts', 'codegen.ts', 'schema.graphql'],
    ...['src', 'scripts', 'prisma', 'console'].flatMap((dir) => filesUnder(join(ROOT, dir)).map((f) => join(dir, f))).filter((f) => !f.startsWith('console/dist/')),
    ...filesUnder(join(ROOT, 'test')).filter((f) => f.endsWith('.graphql')).map((f) => join('test', f)),
    ...['console/dist/index.html', 'console/dist/.inputs.sha256', 'dist/main.js', 'dist/server/main.js', 'dist/.inputs.sha256'],
  ];
  return files
    .map((f) => {
      const st = statSync(join(ROOT, f), { throwIfNoEntry: false });
      return `${f}\t${st ? `${st.size}\t${Math.floor(st.mtimeMs)}` : '-'}`;
    })
    .join('\n');
}

const ifStale = process.argv.includes('--if-stale');
if (ifStale && existsSync(STATS) && readFileSync(STATS, 'utf8') === inputStats()) process.exit(0);

await import('./generate.mjs');
// The console's own build (console/ -> console/dist/), when its inputs changed.
const { buildConsole } = await import('./build-console.mjs');
if (!buildConsole({ ifStale: true })) process.exit(1);

const hash = inputsHash();
if (ifStale && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash && existsSync(join(DIST, 'main.js')) && existsSync(join(DIST, 'server/main.js'))) {
  writeFileSync(STATS, inputStats());
  process.exit(0);
}

const started = performance.now();
if (ifStale) console.error('build: src/ changed since dist/ was built; compiling (npm run build)...');
rmSync(STAMP, { force: true });
rmSync(STATS, { force: true });
const sources = filesUnder(SRC);
const compiled = sources.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => f.replace(/\.ts$/, '.js'));
// tsc's build info remembers what it emitted, not whether it is still there: a missing output means a full build.
if (compiled.some((f) => !existsSync(join(DIST, f)))) rmSync(BUILD_INFO, { force: true });
const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
if (tsc.status !== 0) {
  console.error(`build: tsc -p tsconfig.build.json failed (${tsc.error ? tsc.error.message : `exit ${tsc.status}`}); dist/ was not updated.`);
  process.exit(tsc.status || 1);
}
for (const f of sources.filter(isAsset)) {
  mkdirSync(dirname(join(DIST, f)), { recursive: true });
  copyFileSync(join(SRC, f), join(DIST, f));
}
const expected = new Set(sources.flatMap(outputsOf));
for (const f of filesUnder(DIST)) {
  if (!f.startsWith('.') && !f.startsWith('server/') && !expected.has(f)) rmSync(join(DIST, f));
}
// Last: the bundle of what tsc just wrote (scripts/bundle-server.mjs).
const { bundleServer } = await import('./bundle-server.mjs');
try {
  await bundleServer(ROOT);
} catch (error) {
  console.error(`build: ${error.message}; dist/server/ was not written.`);
  process.exit(1);
}
writeFileSync(STAMP, hash);
writeFileSync(STATS, inputStats());
if (ifStale) console.error(`build: dist/ is up to date (${((performance.now() - started) / 1000).toFixed(1)} s).`);
