import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SchemaEngine, type MigrationList, type SchemaContainer } from '@prisma/schema-engine-wasm';
import { bindMigrationAwareSqlAdapterFactory, type SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';

// Prisma migrations through the WebAssembly schema engine: the native engine would be downloaded from a
// host that is not reachable here. Same files, same `_prisma_migrations` table as the Prisma CLI.

const ROOT = resolve(import.meta.dirname, '../..');
export const SCHEMA_DIR = join(ROOT, 'prisma/schema');
export const MIGRATIONS_DIR = join(ROOT, 'prisma/migrations');
const NO_FILTERS = { externalTables: [], externalEnums: [] };

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

async function withEngine<T>(factory: SqlMigrationAwareDriverAdapterFactory, run: (engine: SchemaEngine) => Promise<T>): Promise<T> {
  const files = readSchemaFiles();
  // The engine never disposes what it connects; left open, its connection keeps PostgreSQL's migration
  // advisory lock and other processes wait on it. Track every connection and close it ourselves.
  const opened: { dispose(): Promise<void> }[] = [];
  const tracked: SqlMigrationAwareDriverAdapterFactory = {
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const adapter = await factory.connect();
      opened.push(adapter);
      return adapter;
    },
    connectToShadowDb: async () => {
      const adapter = await factory.connectToShadowDb();
      opened.push(adapter);
      return adapter;
    },
  };
  const engine = await SchemaEngine.new(
    { datamodels: files.map((f) => [f.path, f.content]) },
    () => undefined,
    bindMigrationAwareSqlAdapterFactory(tracked),
  );
  try {
    return await run(engine);
  } finally {
    engine.free();
    await Promise.all(opened.map((a) => a.dispose().catch(() => undefined)));
  }
}

/** Applies every pending migration; returns the names applied now. */
export async function applyMigrations(factory: SqlMigrationAwareDriverAdapterFactory): Promise<string[]> {
  return withEngine(factory, async (engine) => {
    const out = await engine.applyMigrations({ migrationsList: readMigrations(), filters: NO_FILTERS });
    return out.appliedMigrationNames;
  });
}

/** SQL that would take a database holding `factory`'s current schema to prisma/schema; empty when in sync. */
export async function diffDatabaseToSchema(factory: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  return withEngine(factory, async (engine) => {
    const files = readSchemaFiles();
    const result = await engine.diff({
      from: { tag: 'schemaDatasource', files, configDir: ROOT },
      to: { tag: 'schemaDatamodel', files },
      script: true,
      shadowDatabaseUrl: null,
      exitCode: null,
      filters: NO_FILTERS,
    } as Parameters<SchemaEngine['diff']>[0]);
    return (result.stdout ?? '').replace(/^-- This is an empty migration\.\s*$/m, '').trim();
  });
}

/** The migrations replayed on a throwaway in-memory database, then diffed against the schema. */
export async function diffMigrationsToSchema(): Promise<string> {
  const shadow = new PGlite();
  try {
    const factory = new PrismaPGlite(shadow) as unknown as SqlMigrationAwareDriverAdapterFactory;
    await applyMigrations(factory);
    return await diffDatabaseToSchema(factory);
  } finally {
    await shadow.close();
  }
}

/** Writes prisma/migrations/<timestamp>_<name>/migration.sql; returns its path, or null when nothing changed. */
export async function createMigration(name: string): Promise<string | null> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error('--name must be lower_snake_case (a-z, 0-9, _)');
  const sql = await diffMigrationsToSchema();
  if (!sql) return null;
  const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const dir = join(MIGRATIONS_DIR, `${stamp}_${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'migration.sql'), `${sql}\n`);
  const lock = join(MIGRATIONS_DIR, 'migration_lock.toml');
  if (!existsSync(lock)) writeFileSync(lock, '# Please do not edit this file manually\nprovider = "postgresql"\n');
  return join(dir, 'migration.sql');
}

/** Names of the local migrations that the database has not finished applying. */
export function pendingMigrationNames(applied: Iterable<string>, local: readonly string[] = migrationNames()): string[] {
  const done = new Set(applied);
  return local.filter((n) => !done.has(n));
}
