import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

// An embedded database that runs initdb and then every migration costs 3-6 s on a busy machine, nearly all of it
// initdb. Tests start ~30 of them, so the migrated database is built once per migration set and kept on disk; every
// test database is a copy of that directory, which the gateway then opens as it opens any DATA_DIR. Its own start-up
// still asks the schema engine for pending migrations (and finds none). The gateway is not changed for this.

const ROOT = resolve(import.meta.dirname, '../..');
const MIGRATIONS = join(ROOT, 'prisma/migrations');
/** Where templates are kept between runs (node_modules/.cache is where tools keep what they can rebuild). */
const CACHE = join(ROOT, 'node_modules/.cache/gateway-tests');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)]))
    .sort();
}

/**
 * What decides the template's content: every file of prisma/migrations (name and bytes), and the versions of the
 * embedded PostgreSQL (its data directory format) and of the schema engine that writes `_prisma_migrations`.
 */
export function templateKey(): string {
  const hash = createHash('sha256');
  for (const file of filesUnder(MIGRATIONS)) hash.update(relative(MIGRATIONS, file)).update('\0').update(readFileSync(file)).update('\0');
  for (const pkg of ['@electric-sql/pglite', '@prisma/schema-engine-wasm', 'pglite-prisma-adapter']) {
    const version = (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
    hash.update(`${pkg}@${version}\0`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * The directory of a migrated, otherwise empty embedded database (the `pg` directory PGlite keeps under DATA_DIR),
 * built now unless an earlier run left one for the same migration set. Never opened after it is built: copy it.
 */
export async function migratedPgliteTemplate(): Promise<string> {
  const dir = join(CACHE, `pglite-${templateKey()}`);
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  mkdirSync(CACHE, { recursive: true });
  // Built aside, then renamed into place: a second test run building at the same time loses the rename and uses
  // the winner's; a run that died half-way leaves only a `.building-` directory behind.
  const building = `${dir}.building-${process.pid}-${randomBytes(3).toString('hex')}`;
  const { PGlite } = await import('@electric-sql/pglite');
  const { PrismaPGlite } = await import('pglite-prisma-adapter');
  const { applyMigrations } = await import('../../src/db/migrations.js');
  const { pgliteExtensions } = await import('../../src/db/pglite-extensions.js');
  const pglite = new PGlite(building, { extensions: await pgliteExtensions() });
  try {
    await pglite.waitReady;
    await applyMigrations(new PrismaPGlite(pglite) as unknown as Parameters<typeof applyMigrations>[0]);
  } finally {
    await pglite.close();
  }
  try {
    renameSync(building, dir);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    if (!existsSync(join(dir, 'PG_VERSION'))) throw error;
  }
  removeStale(dir);
  return dir;
}

/**
 * Builds abandoned more than an hour ago, and templates of other migration sets not built today (one may still be
 * in use by a run that started before a migration was added).
 */
function removeStale(current: string): void {
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    if (!name.startsWith('pglite-') || path === current) continue;
    const age = Date.now() - statSync(path).mtimeMs;
    if (age > (name.includes('.building-') ? 3_600_000 : 86_400_000)) rmSync(path, { recursive: true, force: true });
  }
}
