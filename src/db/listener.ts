import pg from 'pg';
import { backoffDelay, type BackoffPolicy } from '../kit/backoff.js';

// The LISTEN connection of a PostgreSQL-backed process. Pooled connections cannot hold a LISTEN, so it is a
// connection of its own, and it is the one place where a database restart would silently cut the process off from
// every other process's changes. So (as graphile-worker's listener does): `error` and `end` are treated alike,
// the connection is dropped and opened again with jittered back-off, LISTEN is issued again, and the owner is told
// (`onReconnect`), because notifications sent while it was away are lost for good. A heartbeat query finds a
// connection that died without a word (a half-open TCP connection after a failover).

/** How the LISTEN connection shows in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'gateway-listener';

export interface ListenerHandlers {
  onPayload(payload: string): void;
  /** The connection was lost; reconnecting has begun. */
  onDisconnect(error: Error): void;
  /** Listening again after a loss: whatever was announced in between was missed. */
  onReconnect(): void;
}

export interface Listener {
  readonly connected: boolean;
  close(): Promise<void>;
}

export interface PgListenerOptions {
  connectionString: string;
  channel: string;
  connectTimeoutMs: number;
  backoff: BackoffPolicy;
  /** Interval of the heartbeat query; it also bounds how long the heartbeat may take. */
  heartbeatMs: number;
  /** Idle time before TCP keepalive probes the connection. */
  keepAliveIdleMs: number;
}

export async function startPgListener(options: PgListenerOptions, handlers: ListenerHandlers): Promise<Listener> {
  const listenSql = `LISTEN "${options.channel.replace(/"/g, '')}"`;
  let client: pg.Client | undefined;
  let closed = false;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;

  async function open(): Promise<pg.Client> {
    const c = new pg.Client({
      connectionString: options.connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs,
      query_timeout: options.heartbeatMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: options.keepAliveIdleMs,
      application_name: LISTENER_APPLICATION_NAME,
    });
    // Always handled: an unhandled `error` event would end the process.
    c.on('error', (error) => lost(c, error));
    c.on('end', () => lost(c, new Error('the LISTEN connection ended')));
    c.on('notification', (n) => n.channel === options.channel && handlers.onPayload(n.payload ?? ''));
    try {
      await c.connect();
      await c.query(listenSql);
    } catch (error) {
      c.end().catch(() => undefined);
      throw error;
    }
    return c;
  }

  function lost(c: pg.Client, error: Error): void {
    if (c !== client) return;
    client = undefined;
    c.end().catch(() => undefined);
    if (closed) return;
    handlers.onDisconnect(error);
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    failures += 1;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      open().then(
        (c) => {
          if (closed) {
            c.end().catch(() => undefined);
            return;
          }
          client = c;
          failures = 0;
          handlers.onReconnect();
        },
        () => {
          if (!closed) scheduleReconnect();
        },
      );
    }, backoffDelay(failures, options.backoff));
  }

  const heartbeat = setInterval(() => {
    const c = client;
    c?.query('SELECT 1').catch((error: Error) => lost(c, error));
  }, options.heartbeatMs);
  heartbeat.unref();

  try {
    client = await open();
  } catch (error) {
    clearInterval(heartbeat);
    throw error;
  }

  return {
    get connected() {
      return client !== undefined;
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
