import { mkdirSync, openSync, closeSync, writeFileSync, readFileSync, unlinkSync, existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { registerPool } from './statements.js';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaClient } from '../generated/prisma/client.js';
import { DEFAULT_EMBEDDED_MIN_FREE_BYTES, DEFAULT_PREPARED_STATEMENTS, type Config } from '../config.js';
import { preparedStatementNames } from './prepared-statements.js';
import { startPgListener, type Listener, type ListenerHandlers } from './listener.js';
import { createDiskGuard, formatBytes, freeBytesOf, guardedAdapterFactory, type DiskGuard } from './disk-guard.js';
import { StartupError } from './startup-error.js';
import { startStallWatchdog, type StallWatchdog } from './stall-watchdog.js';
import { watchPooledConnections } from './connection-deadline.js';
import { untilDeadline } from '../kit/deadline.js';
import type { Logger } from '../log.js';
import { pgliteExtensions } from './pglite-extensions.js';

export type Prisma = PrismaClient;
export type { Listener, ListenerHandlers };

/** One database per process: the Prisma client, the adapter factory the schema engine needs, and LISTEN. */
export interface Database {
  readonly kind: 'postgres' | 'pglite';
  readonly prisma: PrismaClient;
  readonly adapterFactory: SqlMigrationAwareDriverAdapterFactory;
  /** What the pool every request uses holds now; absent on the embedded database (one connection, no pool). */
  poolStats?(): { total: number; waiting: number; max: number };
  /** The embedded database's disk: free bytes and whether writes are refused (absent on PostgreSQL). */
  disk?: Pick<DiskGuard, 'state' | 'freeBytes' | 'minFreeBytes' | 'onFailed'>;
  /**
   * PostgreSQL: closes the pool's idle connections, for when their server may be gone (a worker round stalled): the
   * next statements open new ones rather than wait on a dead one each. Answers how many it closed.
   */
  closeIdleConnections(): number;
  /** LISTENs on `channel`; on PostgreSQL the connection reconnects by itself and says so (idle pooled connections are closed then too). */
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
  /** Client-side deadline of a statement on a pooled connection (src/db/connection-deadline.ts); 0 or absent: none. */
  queryTimeoutMs?: number;
  /** Longest pause between LISTEN reconnect attempts. */
  backoffMaxMs?: number;
  /** PostgreSQL only: how many distinct statement texts are prepared by name on each connection (0: none). */
  preparedStatements?: number;
  /** Embedded only: free bytes on DATA_DIR's disk below which writes are refused and start-up declines (0: no floor). */
  minFreeBytes?: number;
  /** Where the embedded disk's state changes, and PostgreSQL connections closed at their deadline, are said. */
  log?: Logger;
}

/** What a freshly created embedded database takes (~39 MiB measured: 22 MiB of catalog, a 16 MiB WAL segment), rounded up. */
const FIRST_START_BYTES = 48 * 1024 * 1024;
/** A main thread blocked this long while the disk is nearly full is PGlite spinning on it: the process is ended. */
const STALL_EXIT_MS = 10_000;
/** "Nearly full" for that: below the floor, and in any case below a WAL segment (16 MiB) and a little. */
const STALL_LOW_BYTES = 17 * 1024 * 1024;

/** The database options a configuration names. */
export function databaseOptions(config: Config): DatabaseOptions {
  return {
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolMax: config.DATABASE_POOL_MAX,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    backoffMaxMs: config.BACKOFF_MAX_MS,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    minFreeBytes: config.EMBEDDED_MIN_FREE_BYTES,
  };
}

/**
 * Idle time after which TCP keepalive probes a connection, so that the kernel finds a peer that vanished (the
 * default, two hours, finds it long after the failover). The client-side statement deadline covers the statements in
 * flight, which keepalive does not probe.
 */
export const KEEPALIVE_IDLE_MS = 10_000;

/** How long closing waits for connections still in use before it closes them. */
const POOL_END_WAIT_MS = 1000;

/** How often the LISTEN connection proves it is alive (and how long that proof may take). */
const LISTENER_HEARTBEAT_MS = 10_000;
/**
 * The LISTEN connection is the process's sentinel: while it is lost it tries again at least this often (one
 * connection attempt per process), and its return wakes every worker, however long their own back-off has grown.
 */
const LISTENER_RECONNECT_MAX_MS = 2000;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPglite(options.dataDir, options.minFreeBytes ?? DEFAULT_EMBEDDED_MIN_FREE_BYTES, options.log);
}

function openPostgres(connectionString: string, options: DatabaseOptions): Database {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const poolConfig = {
    connectionString,
    max: options.poolMax ?? 10,
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  };
  // One pool for Prisma and for the gateway's own hot statements (src/db/statements.ts), named alike.
  const pool = new pg.Pool(poolConfig);
  // An idle connection the server drops (a restart) is removed by the pool; the next statement opens another.
  pool.on('error', () => undefined);
  const pooled = watchPooledConnections(pool, options.queryTimeoutMs ?? 0, () =>
    options.log?.warn({ queryTimeoutMs: options.queryTimeoutMs }, 'a statement got no answer from the database in time: its connection and the idle ones were closed'),
  );
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
    closeIdleConnections: () => pooled.closeIdle(),
    async listen(channel, handlers) {
      const listener = await startPgListener(
        { connectionString, channel, connectTimeoutMs, backoff: { baseMs: 100, capMs: Math.min(options.backoffMaxMs ?? LISTENER_RECONNECT_MAX_MS, LISTENER_RECONNECT_MAX_MS) }, heartbeatMs: LISTENER_HEARTBEAT_MS, keepAliveIdleMs: KEEPALIVE_IDLE_MS },
        {
          ...handlers,
          // The LISTEN connection is the sentinel: the pooled connections that sat idle beside it went where it went.
          onDisconnect(error) {
            pooled.closeIdle();
            handlers.onDisconnect(error);
          },
        },
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
      // The pool ends once every connection is back; one still waiting on a server that vanished never comes back.
      const ending = pool.end();
      if (!(await untilDeadline(ending, POOL_END_WAIT_MS))) {
        pooled.closeAll();
        await ending;
      }
    },
  };
}

async function openPglite(dataDir: string, minFreeBytes: number, log: Logger | undefined): Promise<Database> {
  const inMemory = dataDir.startsWith('memory://');
  const dir = resolve(dataDir);
  const releaseLock = inMemory ? () => undefined : lockDataDir(dir);
  // Loaded here, not with this module: a gateway on PostgreSQL never loads the embedded database.
  const [{ PGlite }, { PrismaPGlite }, extensions] = await Promise.all([import('@electric-sql/pglite'), import('pglite-prisma-adapter'), pgliteExtensions()]);
  let pglite: PGlite;
  let guard: DiskGuard | undefined;
  let watchdog: StallWatchdog | undefined;
  try {
    if (!inMemory) await createIfAbsent(PGlite, dir, minFreeBytes, log);
    if (!inMemory) refuseWhenLow(dir, minFreeBytes, 'start');
    pglite = new PGlite(inMemory ? dataDir : join(dir, 'pg'), { extensions });
    await pglite.waitReady.catch((error: unknown) => {
      throw new StartupError(`the embedded database in DATA_DIR (${dir}) failed to start: ${describePgliteError(error)}${spaceNote(dir)}`);
    });
    if (!inMemory) {
      guard = createDiskGuard(dir, minFreeBytes, log);
      watchdog = startStallWatchdog({ dir, stallMs: STALL_EXIT_MS, lowBytes: Math.max(minFreeBytes, STALL_LOW_BYTES) });
    }
  } catch (error) {
    releaseLock();
    throw error;
  }
  const plain = new PrismaPGlite(pglite) as unknown as SqlMigrationAwareDriverAdapterFactory;
  const adapterFactory = guard ? guardedAdapterFactory(plain, guard) : plain;
  const prisma = new PrismaClient({ adapter: adapterFactory });
  return {
    kind: 'pglite',
    prisma,
    adapterFactory,
    ...(guard && { disk: guard }),
    closeIdleConnections: () => 0,
    async listen(channel, handlers) {
      // In-process: nothing to lose, nothing to reconnect.
      const unlisten = await pglite.listen(channel, handlers.onPayload);
      // Not on a database that met the full disk: its UNLISTEN would never return.
      return { connected: true, close: async () => (guard?.state() === 'failed' ? undefined : unlisten()) };
    },
    async close() {
      guard?.stop();
      watchdog?.stop();
      await prisma.$disconnect();
      // A database that met the full disk is left as a crash leaves it (its next statement would never return); the
      // next start recovers it from its write-ahead log.
      if (guard?.state() !== 'failed') await pglite.close();
      releaseLock();
    },
  };
}

/** Where a first start builds the database before it is renamed to `pg`: beside it, on the same disk. */
const BUILDING_PREFIX = 'pg.building-';

/**
 * A first start creates the database aside and renames it into place only once PGlite opened it whole, so that a
 * start that fails (a disk too small, a kill) leaves no `pg` directory that would never start; what a failed one
 * left aside is removed by the next start.
 */
async function createIfAbsent(PGliteClass: typeof PGlite, dir: string, minFreeBytes: number, log: Logger | undefined): Promise<void> {
  const target = join(dir, 'pg');
  for (const name of readdirSync(dir)) if (name.startsWith(BUILDING_PREFIX)) rmSync(join(dir, name), { recursive: true, force: true });
  if (existsSync(target) && !existsSync(join(target, 'PG_VERSION'))) {
    // Left by a first start of an earlier build that failed half-way (it never started again: "PGlite failed to
    // initialize properly"). PostgreSQL refuses a directory without PG_VERSION, so it never held a write.
    log?.warn({ dataDir: dir }, `DATA_DIR/pg (${target}) is an incomplete database left by a failed first start (no PG_VERSION): removed, creating it again`);
    rmSync(target, { recursive: true, force: true });
  }
  if (existsSync(target)) return;
  refuseWhenLow(dir, minFreeBytes > 0 ? minFreeBytes + FIRST_START_BYTES : 0, 'create');
  const building = join(dir, `${BUILDING_PREFIX}${process.pid}-${randomBytes(3).toString('hex')}`);
  try {
    const pglite = new PGliteClass(building);
    try {
      await pglite.waitReady;
    } finally {
      await pglite.close().catch(() => undefined);
    }
    renameSync(building, target);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw new StartupError(
      `the embedded database could not be created in DATA_DIR (${dir}): ${describePgliteError(error)}${spaceNote(dir)}; nothing was left behind: start again once that is fixed`,
    );
  }
}

/** Declines to create or open the database on a disk with less than `needBytes` free: it would fail half-way. */
function refuseWhenLow(dir: string, needBytes: number, what: 'create' | 'start'): void {
  const free = freeBytesOf(dir);
  if (needBytes <= 0 || free === undefined || free >= needBytes) return;
  const doing = what === 'create' ? 'be created (a first start needs ~40 MiB, plus EMBEDDED_MIN_FREE_BYTES to write)' : 'start';
  throw new StartupError(
    `the embedded database in DATA_DIR (${dir}) cannot ${doing}: its disk has ${formatBytes(free)} free and needs ${formatBytes(needBytes)}. Free space on that disk or set DATA_DIR to a larger one, then start again; nothing was changed`,
  );
}

/** Emscripten's errno numbers (not Linux's) for what a disk can do to a start-up. */
const EMSCRIPTEN_ERRNO: Record<number, string> = {
  2: 'permission denied (EACCES)',
  19: 'disk quota exceeded (EDQUOT)',
  29: 'input/output error (EIO)',
  44: 'no such file or directory (ENOENT)',
  51: 'no space left on device (ENOSPC)',
  63: 'operation not permitted (EPERM)',
  69: 'read-only file system (EROFS)',
};

/** PGlite rejects with what Emscripten threw: an Error, an ErrnoError ({ errno, code }), a plain object or a string. */
function describePgliteError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  if (typeof error === 'string') return error;
  const { code, errno, message } = (error ?? {}) as { code?: unknown; errno?: unknown; message?: unknown };
  if (typeof message === 'string' && message) return message;
  if (typeof code === 'string') return `file system error ${code}`;
  if (typeof errno === 'number') return EMSCRIPTEN_ERRNO[errno] ?? `file system error ${errno} (Emscripten's numbering)`;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** What is free on the disk, said when a start failed: the first thing to look at. */
function spaceNote(dir: string): string {
  const free = freeBytesOf(dir);
  return free === undefined ? '' : ` (the disk of DATA_DIR has ${formatBytes(free)} free)`;
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
