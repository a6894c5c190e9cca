import { mkdirSync, openSync, closeSync, writeFileSync, readFileSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';

export type Prisma = PrismaClient;
export type Unlisten = () => Promise<void>;

/** One database per process: the Prisma client, the adapter factory the schema engine needs, and LISTEN. */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly prisma: PrismaClient;
  readonly adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  listen(channel: string, onPayload: (payload: string) => void): Promise<Unlisten>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** Directory of the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

function openPostgres(connectionString: string): Database {
  const adapterFactory = new PrismaPg({ connectionString });
  const prisma = new PrismaClient({ adapter: adapterFactory });
  const listeners: pg.Client[] = [];
  return {
    kind: 'postgres',
    prisma,
    adapterFactory,
    async listen(channel, onPayload) {
      // A dedicated connection: pooled connections cannot hold a LISTEN.
      const client = new pg.Client({ connectionString });
      await client.connect();
      client.on('notification', (n) => n.channel === channel && onPayload(n.payload ?? ''));
      client.on('error', () => undefined);
      await client.query(`LISTEN "${channel.replace(/"/g, '')}"`);
      listeners.push(client);
      return async () => {
        listeners.splice(listeners.indexOf(client), 1);
        await client.end().catch(() => undefined);
      };
    },
    async close() {
      await Promise.all(listeners.splice(0).map((c) => c.end().catch(() => undefined)));
      await prisma.$disconnect();
    },
  };
}

async function openPglite(dataDir: string): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  const releaseLock = inMemory ? () => undefined : lockDataDir(resolve(dataDir));
  let pglite: PGlite;
  try {
    pglite = new PGlite(inMemory ? dataDir : resolve(dataDir, 'pg'));
    await pglite.waitReady;
  } catch (error) {
    releaseLock();
    throw error;
  }
  const adapterFactory = new PrismaPGlite(pglite) as unknown as SqlMigrationAwareDriverAdapterFactory;
  const prisma = new PrismaClient({ adapter: adapterFactory });
  return {
    kind: 'pglite',
    prisma,
    adapterFactory,
    async listen(channel, onPayload) {
      const unlisten = await pglite.listen(channel, onPayload);
      return async () => unlisten();
    },
    async close() {
      await prisma.$disconnect();
      await pglite.close();
      releaseLock();
    },
  };
}

/** PGlite is one connection inside one process: a second process on the same directory would corrupt it. */
function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lockPath = join(dir, 'gateway.lock');
  const tryCreate = () => {
    const fd = openSync(lockPath, 'wx');
    writeFileSync(fd, String(process.pid));
    closeSync(fd);
  };
  try {
    tryCreate();
  } catch {
    const holder = Number(readFileSync(lockPath, 'utf8'));
    if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
      throw new Error(
        `The embedded database in ${dir} is in use by process ${holder}. Stop it, or set DATABASE_URL to share a PostgreSQL server between processes.`,
      );
    }
    unlinkSync(lockPath); // left behind by a process that died
    tryCreate();
  }
  return () => {
    try {
      unlinkSync(lockPath);
    } catch {
      /* already gone */
    }
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
