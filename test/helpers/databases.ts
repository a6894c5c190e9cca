import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';

// Database tests run against both the embedded database and the PostgreSQL server, each on a fresh database.

export type DatabaseKind = 'pglite' | 'postgres';
export const DATABASES: DatabaseKind[] = ['pglite', 'postgres'];

/** The server the PostgreSQL runs create their fresh databases on. */
export const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

export interface FreshDatabase {
  env: Record<string, string>;
  url?: string;
  drop(): Promise<void>;
}

/**
 * A new database with no rows. PostgreSQL ones are created empty on `adminUrl` (the test server unless told), so the
 * gateway migrates them from scratch, and dropped by drop(). Embedded ones are a copy of the run's migrated template
 * (test/global-setup.ts) in a directory of their own, removed by drop(); the gateway finds no migration pending.
 */
export async function freshDatabase(kind: 'postgres', adminUrl?: string): Promise<FreshDatabase & { url: string }>;
export async function freshDatabase(kind: DatabaseKind, adminUrl?: string): Promise<FreshDatabase>;
export async function freshDatabase(kind: DatabaseKind, adminUrl = ADMIN_URL): Promise<FreshDatabase> {
  if (kind === 'pglite') return embeddedCopy();
  const name = `gw_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    env: { DATABASE_URL: url.toString() },
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * A new empty directory in this run's directory, for an embedded database a test starts from nothing (initdb) or a
 * file beside one: it gets the copies' file system (test/global-setup.ts), and goes with the run if the test forgets it.
 */
export function runScratchDir(prefix: string): string {
  return mkdtempSync(join(inject('testRunDir'), prefix));
}

function embeddedCopy(): FreshDatabase {
  const dir = runScratchDir('pglite-');
  cpSync(inject('pgliteTemplate'), join(dir, 'pg'), { recursive: true });
  return { env: { DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}
