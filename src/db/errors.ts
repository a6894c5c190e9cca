import { ConflictError, NotFoundError, ServiceUnavailableError } from '../errors.js';

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

/** Prisma codes of a database that cannot be reached or answer: can't reach, timed out, connection closed, pool timeout. */
const UNAVAILABLE_PRISMA_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** The driver adapter's kinds for the same (src of @prisma/adapter-pg: convertDriverError). */
const UNAVAILABLE_ADAPTER_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
/**
 * SQLSTATEs of a server going away or not taking work: class 08 (connection exception), 57P01-57P03 (admin
 * shutdown, crash shutdown, cannot connect now), 53300 (too many connections), 57014 (statement timeout).
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300|57014)$/;
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

/** The client-facing error for an outage (no host, port or driver text), or undefined when `error` is something else. */
export function unavailableError(error: unknown): ServiceUnavailableError | undefined {
  if (error instanceof ServiceUnavailableError) return error;
  return isDatabaseUnavailable(error) ? new ServiceUnavailableError() : undefined;
}
