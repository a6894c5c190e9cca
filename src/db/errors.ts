import { ConflictError, DiskFullError, NotFoundError, ServiceUnavailableError, ValidationError } from '../errors.js';

// Prisma's and the PostgreSQL driver's errors are translated here and nowhere else.

function prismaCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^P\d{4}$/.test(code) ? code : undefined;
}

export async function translateWriteErrors<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    switch (prismaCode(error)) {
      case 'P2002':
        throw new ConflictError(`${what} already exists`);
      case 'P2025':
      case 'P2001':
        throw new NotFoundError(`${what} not found`);
      case 'P2003':
        throw new ConflictError(`${what} is referenced by other records`);
      default:
        throw error;
    }
  }
}

/**
 * Prisma codes of a database that cannot take the work now: can't reach, timed out, connection closed, pool timeout,
 * a transaction that could not start (P2028), a write conflict or deadlock to retry (P2034), and a table that does not
 * exist yet (P2021: migrations pending, which readiness reports).
 */
const UNAVAILABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2021', 'P2024', 'P2028', 'P2034']);
/** The driver adapter's kinds for the same (src of @prisma/adapter-pg: convertDriverError). */
const UNAVAILABLE_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections', 'TransactionWriteConflict', 'TableDoesNotExist']);
/**
 * SQLSTATEs of a server going away or not taking work: class 08 (connection exception), 57P01-57P03 (admin
 * shutdown, crash shutdown, cannot connect now), 53300 (too many connections), 57014 (statement timeout), 25006 (a
 * read-only transaction: a replica, or default_transaction_read_only after a failover), 55P03 (lock not available),
 * 40001 and 40P01 (serialization failure, deadlock: to be retried), 42P01 (no such table: migrations pending), 53100
 * (disk full; the embedded database's disk guard says so too, src/db/disk-guard.ts).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300|53100|57014|25006|55P03|40001|40P01|42P01)$/;
/** Node socket errors and the pg driver's own messages for a lost or unobtainable connection. */
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Can't reach database server/i;

/** True when `error` says the database cannot be reached right now (an outage, not a bug or a client's mistake). */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    if (e instanceof ServiceUnavailableError) return true;
    const { code, meta, message } = e as { code?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown; originalCode?: unknown } } }; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_PRISMA_CODES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    const cause = meta?.driverAdapterError?.cause;
    if (cause) {
      if (typeof cause.kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(cause.kind)) return true;
      for (const sqlstate of [cause.code, cause.originalCode]) if (typeof sqlstate === 'string' && UNAVAILABLE_SQLSTATE.test(sqlstate)) return true;
    }
    if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
  }
  return false;
}

/** True when `error` is (or wraps) the database's disk_full, SQLSTATE 53100. */
function isDiskFull(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const { code, meta } = e as { code?: unknown; meta?: { driverAdapterError?: { cause?: { code?: unknown; originalCode?: unknown } } } };
    const cause = meta?.driverAdapterError?.cause;
    if ([code, cause?.code, cause?.originalCode].includes('53100')) return true;
  }
  return false;
}

/** The client-facing error for an outage (no host, port or driver text), or undefined when `error` is something else. */
export function unavailableError(error: unknown): ServiceUnavailableError | undefined {
  if (error instanceof ServiceUnavailableError) return error;
  if (!isDatabaseUnavailable(error)) return undefined;
  return isDiskFull(error) ? new DiskFullError() : new ServiceUnavailableError();
}

/** SQLSTATEs of a value the database cannot store: bad text or escape (22021, 22P05), bad or out-of-range date-time (22007, 22008), number out of range (22003). */
const UNSTORABLE_SQLSTATE = /^(22021|22P05|22007|22008|22003)$/;
/** Prisma's codes for the same: value too long, invalid value, value out of range. */
const UNSTORABLE_PRISMA_CODES = new Set(['P2000', 'P2007', 'P2020']);

/**
 * A client's value the database refused to store, as a ValidationError; undefined for anything else. The edges check
 * such input first and name the field; this is the net under them, so a value they missed is still a 400, not a 500.
 */
export function unstorableInputError(error: unknown): ValidationError | undefined {
  const { code, meta } = (error ?? {}) as { code?: unknown; meta?: { driverAdapterError?: { cause?: { code?: unknown; originalCode?: unknown } } } };
  const cause = meta?.driverAdapterError?.cause;
  const sqlstates = [code, cause?.code, cause?.originalCode].filter((c): c is string => typeof c === 'string');
  if (!(typeof code === 'string' && UNSTORABLE_PRISMA_CODES.has(code)) && !sqlstates.some((c) => UNSTORABLE_SQLSTATE.test(c))) return undefined;
  return new ValidationError([{ field: 'input', message: 'holds a value the database cannot store (a NUL character, a date-time or number out of range, or a text too long)' }]);
}
