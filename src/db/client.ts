import { mkdirSync, openSync, closeSync, writeFileSync, readFileSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { registerPool } from './statements.js';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaClient } from '../generated/prisma/client.js';
import type { Config } from '../config.js';
import { DEFAULT_PREPARED_STATEMENTS, preparedStatementNames } from './prepared-statements.js';
import { startPgListener, type Listener, type ListenerHandlers } from './listener.js';

export type Prisma = PrismaClient;
export type { Listener, ListenerHandlers };

/** One database per process: the Prisma client, the adapter factory the schema engine needs, and LISTEN. */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly prisma: PrismaClient;
  readonly adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  /** What the pool every request uses holds now; absent on the embedded database (one connection, no pool). */
  poolStats?(): { total: number; waiting: number; max: number };
  /** LISTENs on `channel`; on PostgreSQL the connection reconnects by itself and says so. */
  listen(channel: string, handlers: ListenerHandlers): Promise<Listener>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** Directory of the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string;
  /** PostgreSQL only (the embedded database is one connection inside the process, with no timeouts). */
  poolMax?: number;
  connectTimeoutMs?: number;
  /** 0 or absent: no statement_timeout. */
  statementTimeoutMs?: number;
  /** Longest pause between LISTEN reconnect attempts. */
  backoffMaxMs?: number;
  /** PostgreSQL only: how many distinct statement texts are prepared by name on each connection (0: none). */
  preparedStatements?: number;
}

/** The database options a configuration names. */
export function databaseOptions(config: Config): DatabaseOptions {
  return {
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolMax: config.DATABASE_POOL_MAX,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    backoffMaxMs: config.BACKOFF_MAX_MS,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
  };
}

/** How often the LISTEN connection proves it is alive (and how long that proof may take). */
const LISTENER_HEARTBEAT_MS = 10_000;
/**
 * The LISTEN connection is the process's sentinel: while it is lost it tries again at least this often (one
 * connection attempt per process), and its return wakes every worker, however long their own back-off has grown.
 */
const LISTENER_RECONNECT_MAX_MS = 2000;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPglite(options.dataDir);
}

function openPostgres(connectionString: string, options: DatabaseOptions): Database {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const poolConfig = {
    connectionString,
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  };
  // One pool for Prisma and for the gateway's own hot statements (src/db/statements.ts), named alike.
  const pool = new pg.Pool(poolConfig);
  // An idle connection the server drops (a restart) is removed by the pool; the next statement opens another.
  pool.on('error', () => undefined);
  const statementNames = preparedStatementNames(options.preparedStatements ?? DEFAULT_PREPARED_STATEMENTS);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { statementNameGenerator: statementNames }) });
  registerPool(prisma, pool, statementNames);
  // The schema engine gets connections of its own, ended when it is done: it holds a session advisory lock while it
  // migrates, which on a shared pool would stay with a pooled connection and stop every other process's start-up.
  const adapterFactory = new PrismaPg(poolConfig);
  const listeners = new Set<Listener>();
  return {
    kind: 'postgres',
    prisma,
    adapterFactory,
    poolStats: () => ({ total: pool.totalCount, waiting: pool.waitingCount, max: poolConfig.max }),
    async listen(channel, handlers) {
      const listener = await startPgListener(
        { connectionString, channel, connectTimeoutMs, backoff: { baseMs: 100, capMs: Math.min(options.backoffMaxMs ?? LISTENER_RECONNECT_MAX_MS, LISTENER_RECONNECT_MAX_MS) }, heartbeatMs: LISTENER_HEARTBEAT_MS },
        handlers,
      );
      listeners.add(listener);
      return {
        get connected() {
          return listener.connected;
        },
        async close() {
          listeners.delete(listener);
          await listener.close();
        },
      };
    },
    async close() {
      await Promise.all([...listeners].map((l) => l.close()));
      listeners.clear();
      await prisma.$disconnect();
      await pool.end();
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
    async listen(channel, handlers) {
      // In-process: nothing to lose, nothing to reconnect.
      const unlisten = await pglite.listen(channel, handlers.onPayload);
      return { connected: true, close: async () => unlisten() };
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
