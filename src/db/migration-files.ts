import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { MigrationList, SchemaContainer } from '@prisma/schema-engine-wasm';
import { PROJECT_ROOT } from '../kit/project-root.js';

// The schema and migration files as this build ships them, read without loading the schema engine: every start asks
// which migrations are pending, and only a start that has some pays for the engine (src/db/migrations.ts).

export const SCHEMA_DIR = join(PROJECT_ROOT, 'prisma/schema');
export const MIGRATIONS_DIR = join(PROJECT_ROOT, 'prisma/migrations');

export function readSchemaFiles(dir = SCHEMA_DIR): SchemaContainer[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.prisma'))
    .sort()
    .map((f) => ({ path: join(dir, f), content: readFileSync(join(dir, f), 'utf8') }));
}

/** Names of the migrations in `dir`, in order (their folders), without reading their SQL. */
export function migrationNames(dir = MIGRATIONS_DIR): string[] {
  return existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort() : [];
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationList {
  const names = migrationNames(dir);
  const lockPath = join(dir, 'migration_lock.toml');
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: names.map((name) => ({
      path: name,
      migrationFile: { path: 'migration.sql', content: { tag: 'ok', value: readFileSync(join(dir, name, 'migration.sql'), 'utf8') } },
    })),
  };
}

/** Names of the local migrations that the database has not finished applying. */
export function pendingMigrationNames(applied: Iterable<string>, local: readonly string[] = migrationNames()): string[] {
  const done = new Set(applied);
  return local.filter((n) => !done.has(n));
}
