// Runs before `npm test` (pretest): makes sure the machine has what the suite drives as real peers, so a fresh box
// gets either a working run or one clear sentence, never a TypeError from a missing tool half-way through.
//  1. The Debian packages of scripts/ci-apt-packages.txt (OpenSSL's GOST engine, gost12sum, Chromium): installed
//     with apt-get when this user may (root, or password-less sudo), otherwise the exact command is printed.
//  2. The PostgreSQL server of TEST_POSTGRES_URL answers and its user may create databases.
// TEST_APT_PACKAGES (space-separated) replaces the package list; TEST_APT_INSTALL=never only names what is missing.
// The script's own test uses both.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';

const ROOT = new URL('..', import.meta.url);
const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

function listedPackages() {
  if (process.env.TEST_APT_PACKAGES !== undefined) return process.env.TEST_APT_PACKAGES.split(/\s+/).filter(Boolean);
  return readFileSync(new URL('scripts/ci-apt-packages.txt', ROOT), 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean);
}

const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
const installed = (pkg) =>
  spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.trim() === 'install ok installed';

function fail(lines) {
  console.error(['', 'npm test cannot start:', ...lines.map((l) => `  ${l}`), ''].join('\n'));
  process.exit(1);
}

function ensurePackages() {
  const packages = listedPackages();
  if (!packages.length) return;
  const installLine = `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  if (!has('dpkg-query') || !has('apt-get')) {
    fail([`the tests drive Debian packages as peers (${packages.join(', ')}); this machine has no dpkg/apt-get.`, `On Debian: sudo ${installLine}`]);
  }
  const missing = packages.filter((p) => !installed(p));
  if (!missing.length) return;
  const asRoot = process.getuid?.() === 0;
  const mayInstall = process.env.TEST_APT_INSTALL !== 'never';
  const sudo = mayInstall && !asRoot && has('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0;
  if (!mayInstall || (!asRoot && !sudo)) {
    fail([`missing Debian packages: ${missing.join(' ')}`, 'Install them, then run npm test again:', `  sudo apt-get update && sudo ${installLine}`]);
  }
  console.log(`test prerequisites: installing ${missing.join(' ')} with apt-get (takes a minute or two the first time)`);
  const prefix = asRoot ? [] : ['sudo', '-n'];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['apt-get', 'update', '-qq'], ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...missing]]) {
    const [file, ...rest] = [...prefix, ...args];
    const run = spawnSync(file, rest, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (run.status !== 0) fail([`${args.join(' ')} failed (exit ${run.status ?? run.signal}).`, `Install by hand: sudo apt-get update && sudo ${installLine}`]);
  }
  const still = missing.filter((p) => !installed(p));
  if (still.length) fail([`apt-get did not install: ${still.join(' ')}`, `Install by hand: sudo ${installLine}`]);
}

async function ensurePostgres() {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  const where = `TEST_POSTGRES_URL=${ADMIN_URL.replace(/\/\/([^:@/]+):[^@]*@/, '//$1:***@')}`;
  try {
    await client.connect();
    const { rows } = await client.query('SELECT rolcreatedb OR rolsuper AS may FROM pg_roles WHERE rolname = current_user');
    if (!rows[0]?.may) fail([`${where}: this user may not create databases (each test file makes a fresh one).`, 'Use a user with CREATEDB (the default is the superuser postgres).']);
  } catch (error) {
    fail([`${where}: PostgreSQL does not answer (${error.code ?? error.message}).`, 'The suite runs every database test on PostgreSQL too: start it, or set TEST_POSTGRES_URL to a server whose user may CREATE DATABASE.']);
  } finally {
    await client.end().catch(() => undefined);
  }
}

ensurePackages();
await ensurePostgres();
