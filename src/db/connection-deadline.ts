import { Socket } from 'node:net';
import type pg from 'pg';

// A statement whose server vanished (a failover where the old primary's host is gone, its packets dropped) is never
// answered: no statement_timeout fires, because it is the server that enforces it, and the kernel gives up on such a
// socket only after ~15 minutes. So every pooled connection that is checked out (a statement or a transaction under
// way) has a client-side deadline: no byte from the server for DATABASE_QUERY_TIMEOUT_MS and its socket is destroyed,
// which fails what waits on it (an outage: ETIMEDOUT) and makes the pool discard the connection instead of lending
// it out again with a statement still stuck on it. The idle connections opened alongside it go too: they were opened
// to the same server, and each would otherwise cost the next statement lent it another whole deadline. Other signs
// that the server may be gone (the LISTEN connection lost, a worker round stalled) close the idle ones as well.

/** What the statements that met the deadline fail with: a socket timeout, as the driver adapter and the classifier know it. */
export class QueryDeadlineError extends Error {
  readonly code = 'ETIMEDOUT';
  readonly syscall = 'read';
  readonly errno = -110;
  constructor(timeoutMs: number) {
    super(`the database did not answer within ${timeoutMs} ms (DATABASE_QUERY_TIMEOUT_MS); its connection was closed`);
    this.name = 'QueryDeadlineError';
  }
}

const socketOf = (client: pg.PoolClient): Socket | undefined => {
  const stream: unknown = client.connection?.stream;
  return stream instanceof Socket ? stream : undefined;
};

/** What the watch offers: closing the idle connections when something else says their server may be gone. */
export interface PooledConnections {
  /** Closes every idle pooled connection (the next statements open new ones); answers how many. */
  closeIdle(): number;
  /** Closes every pooled connection, in use or not (at the end, when the pool's end waits on ones that never answer). */
  closeAll(): void;
}

/** Arms the deadline on `pool`'s connections (0: none). `onDeadline` hears of each connection closed by it. */
export function watchPooledConnections(pool: pg.Pool, timeoutMs: number, onDeadline?: () => void): PooledConnections {
  const idle = new Set<pg.PoolClient>();
  const open = new Set<pg.PoolClient>();
  const closeIdle = () => {
    const closed = idle.size;
    for (const client of idle) socketOf(client)?.destroy();
    idle.clear();
    return closed;
  };
  pool.on('connect', (client) => {
    const socket = socketOf(client);
    if (!socket) return;
    open.add(client);
    socket.on('close', () => {
      idle.delete(client);
      open.delete(client);
    });
    socket.on('timeout', () => {
      onDeadline?.();
      socket.destroy(new QueryDeadlineError(timeoutMs));
      closeIdle();
    });
  });
  pool.on('acquire', (client) => {
    idle.delete(client);
    if (timeoutMs) socketOf(client)?.setTimeout(timeoutMs);
  });
  pool.on('release', (error, client) => {
    if (timeoutMs) socketOf(client)?.setTimeout(0);
    if (!error) idle.add(client);
  });
  pool.on('remove', (client) => {
    idle.delete(client);
    open.delete(client);
  });
  return {
    closeIdle,
    closeAll() {
      for (const client of open) socketOf(client)?.destroy();
      open.clear();
      idle.clear();
    },
  };
}
