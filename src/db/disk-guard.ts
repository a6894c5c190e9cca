import { DEFAULT_EMBEDDED_MIN_FREE_BYTES } from '../config.js';
import { statfsSync } from 'node:fs';
import { DriverAdapterError, type SqlDriverAdapter, type SqlMigrationAwareDriverAdapterFactory, type SqlQuery, type Transaction } from '@prisma/driver-adapter-utils';
import type { Logger } from '../log.js';

// The embedded database writes through Emscripten's file system into DATA_DIR, inside this process. Left to meet a
// full disk, PostgreSQL inside WebAssembly fails in ways a server would survive but it may not (an abort of the whole
// module, a start-up that no longer succeeds), so the gateway keeps it from getting there: below a floor of free
// space its own writes are refused with a clear 503 before they reach the database, while reads go on; when space
// comes back, writes are taken again. If something else fills the disk anyway, what the database then says is
// turned into the same 503 (docs/decisions.md, Database faults).


/** SQLSTATE disk_full: the database itself could not extend a file. */
export const DISK_FULL_SQLSTATE = '53100';

/** How often free space is read while nothing writes; a write reads it again when the last reading is older than STALE_MS. */
const POLL_MS = 1000;
const STALE_MS = 200;

/** ok; low: writes refused until space is freed; failed: the database met the full disk and cannot go on (a restart recovers it). */
export type DiskState = 'ok' | 'low' | 'failed';

export interface DiskGuard {
  readonly dir: string;
  /** Bytes below which writes are refused (0: never refused). */
  readonly minFreeBytes: number;
  /** Free bytes at the last reading (available to this process), or undefined when the platform cannot say. */
  freeBytes(): number | undefined;
  /** Reads free space now if the last reading is stale; 'low' while writes are refused, 'failed' for good. */
  state(): DiskState;
  /** Called once when the database met the full disk in a way it does not survive (`serve` then exits, 1). */
  onFailed(listener: (reason: string) => void): void;
  /** Marks the database failed: no statement reaches it any more. */
  fail(reason: string): void;
  stop(): void;
}

/** Bytes available to an unprivileged writer on the file system of `dir`, or undefined where statfs is not there. */
export function freeBytesOf(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return undefined;
  }
}

export function formatBytes(bytes: number): string {
  const mib = bytes / 1024 / 1024;
  return mib >= 10 ? `${Math.round(mib)} MiB` : `${mib.toFixed(1)} MiB`;
}

export function createDiskGuard(dir: string, minFreeBytes: number, log: Logger | undefined): DiskGuard {
  let free = freeBytesOf(dir);
  let readAt = Date.now();
  let low = false;
  let failed: string | undefined;
  const failedListeners: ((reason: string) => void)[] = [];
  const read = () => {
    free = freeBytesOf(dir);
    readAt = Date.now();
    const nowLow = minFreeBytes > 0 && free !== undefined && free < minFreeBytes;
    if (nowLow !== low) {
      low = nowLow;
      const fields = { dataDir: dir, freeBytes: free, minFreeBytes };
      if (low) log?.error(fields, `the disk of DATA_DIR (${dir}) is nearly full: ${formatBytes(free ?? 0)} free, below EMBEDDED_MIN_FREE_BYTES (${formatBytes(minFreeBytes)}); writes are refused (503) and reads served until space is freed`);
      else log?.warn(fields, `the disk of DATA_DIR (${dir}) has ${formatBytes(free ?? 0)} free again; writes are accepted`);
    }
  };
  read();
  const timer = setInterval(read, POLL_MS);
  timer.unref();
  return {
    dir,
    minFreeBytes,
    freeBytes: () => free,
    state() {
      if (failed !== undefined) return 'failed';
      if (Date.now() - readAt > STALE_MS) read();
      return low ? 'low' : 'ok';
    },
    onFailed: (listener) => void failedListeners.push(listener),
    fail(reason) {
      if (failed !== undefined) return;
      failed = reason;
      log?.fatal({ dataDir: dir, freeBytes: freeBytesOf(dir), reason }, `the embedded database met the full disk of DATA_DIR (${dir}) and cannot go on (${reason}); every request now answers 503. Free space on that disk and start the gateway again: it recovers every acknowledged write`);
      for (const listener of failedListeners) listener(reason);
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * Statements that make the database store more: data changes, DDL, maintenance. SELECT (and a WITH of SELECTs),
 * SHOW, SET, transaction control, LISTEN/NOTIFY pass: they write nothing lasting, or nothing that grows a file.
 */
const WRITE_KEYWORD = /^(insert|update|delete|merge|upsert|create|alter|drop|truncate|copy|vacuum|cluster|reindex|refresh|grant|revoke|comment|security|import)\b/i;
const WRITE_IN_WITH = /\b(insert|update|delete|merge)\b/i;

export function isWriteStatement(sql: string): boolean {
  const text = sql.replace(/^(\s+|--[^\n]*\n|\/\*[\s\S]*?\*\/)+/, '');
  if (WRITE_KEYWORD.test(text)) return true;
  return /^with\b/i.test(text) && WRITE_IN_WITH.test(text);
}

/** What the adapter throws for a refused write or a full disk: the shape of the database's own disk_full error. */
function diskFullError(guard: DiskGuard): DriverAdapterError {
  const free = guard.freeBytes();
  return new DriverAdapterError({
    kind: 'postgres',
    code: DISK_FULL_SQLSTATE,
    severity: 'ERROR',
    message: `the disk of the embedded database is nearly full (${free === undefined ? 'unknown' : formatBytes(free)} free)`,
    detail: undefined,
    column: undefined,
    hint: undefined,
  });
}

/**
 * SQLSTATE and message of what PGlite threw: a DriverAdapterError (statements; its cause holds them, and the adapter
 * has its own copy of the class, so it is told by its shape) or PGlite's own DatabaseError (a commit).
 */
function sqlError(error: unknown): { code?: unknown; message?: unknown } {
  const e = (error ?? {}) as { name?: unknown; code?: unknown; message?: unknown; cause?: { originalCode?: unknown; originalMessage?: unknown; code?: unknown; message?: unknown } };
  if (e.name === 'DriverAdapterError' && e.cause && typeof e.cause === 'object') {
    return { code: e.cause.originalCode ?? e.cause.code, message: e.cause.originalMessage ?? e.cause.message };
  }
  return e;
}

/** True when `error` is the database's own failure and the disk is why (read after it failed, while it is low). */
function failedForSpace(guard: DiskGuard, error: unknown): boolean {
  if (sqlError(error).code === DISK_FULL_SQLSTATE) return true;
  const free = freeBytesOf(guard.dir);
  // With the floor off (0), a disk with less than a megabyte left is still why a statement failed.
  return free !== undefined && free < Math.max(guard.minFreeBytes, 1024 * 1024);
}

/**
 * What PGlite does not come back from (measured on a tmpfs): a WAL segment it could not create or write leaves the
 * next statement spinning in WebAssembly at 100% CPU, holding the event loop (no /healthz, no SIGTERM), and an
 * abort() of the module leaves it in an unknown state. After either, no statement may reach it again.
 */
function unrecoverable(error: unknown): string | undefined {
  const { code, message } = sqlError(error);
  if (code === DISK_FULL_SQLSTATE && typeof message === 'string' && /pg_wal|xlog/i.test(message)) return 'its write-ahead log could not be written';
  if (error instanceof WebAssembly.RuntimeError || (typeof message === 'string' && /^Aborted\(/.test(message))) return 'the embedded PostgreSQL aborted';
  return undefined;
}

type Queryable = Pick<SqlDriverAdapter, 'queryRaw' | 'executeRaw'>;

function guarded<T extends object>(target: T, guard: DiskGuard): T {
  const run = async <R>(sql: string, call: () => Promise<R>): Promise<R> => {
    const state = guard.state();
    if (state === 'failed' || (state === 'low' && isWriteStatement(sql))) throw diskFullError(guard);
    try {
      return await call();
    } catch (error) {
      if (!failedForSpace(guard, error)) throw error;
      const reason = unrecoverable(error);
      if (reason) guard.fail(reason);
      throw diskFullError(guard);
    }
  };
  return new Proxy(target, {
    get(t, prop) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      switch (prop) {
        case 'queryRaw':
        case 'executeRaw':
          return (query: SqlQuery) => run(query.sql, () => (method.call(t, query) as ReturnType<Queryable['queryRaw']>));
        case 'executeScript':
          return (script: string) => run(script, () => method.call(t, script) as Promise<void>);
        case 'startTransaction':
          return async (...args: unknown[]) => guarded((await run('BEGIN', () => method.apply(t, args) as Promise<Transaction>)), guard);
        case 'commit':
          return () => run('COMMIT', () => method.call(t) as Promise<void>);
        case 'rollback':
          // The transaction of a failed database is left open: its ROLLBACK would never return.
          return () => (guard.state() === 'failed' ? Promise.resolve() : method.call(t));
        default:
          return method.bind(t);
      }
    },
  });
}

/** The adapter factory whose connections refuse writes while the disk is low and say disk_full when it filled. */
export function guardedAdapterFactory(factory: SqlMigrationAwareDriverAdapterFactory, guard: DiskGuard): SqlMigrationAwareDriverAdapterFactory {
  return new Proxy(factory, {
    get(t, prop) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (prop === 'connect' || prop === 'connectToShadowDb') return async () => guarded((await method.call(t)) as SqlDriverAdapter, guard);
      return method.bind(t);
    },
  });
}
