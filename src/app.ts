import type { YogaServerInstance } from 'graphql-yoga';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import type { AppServices } from './services.js';
import { createLogger, type Logger } from './log.js';
import { untilDeadline } from './kit/deadline.js';
import { createReadiness } from './runtime/readiness.js';
import type { Tracing } from './telemetry/tracing.js';
import { startServices } from './gateway/services.js';
import { createApi } from './api/operations.js';
import { startHttpServer } from './edge/http-server.js';
import { readConsoleManifest } from './edge/console/assets.js';
import { warnWhenNoApiKey } from './access/no-key-warning.js';

// Wires the gateway: services (database, bus, workers), the API (schema, pipeline, legacy door) and the HTTP server
// with its edges; and closes them in order.

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly services: AppServices;
  readonly database: Database;
  readonly log: Logger;
  readonly yoga: YogaServerInstance<Record<string, unknown>, AppServices>;
  /** Stops accepting, drains workers, closes the database. */
  close(): Promise<void>;
}

/**
 * `tracing`: started by `serve` when OTEL_EXPORTER_OTLP_ENDPOINT is set (src/telemetry/); absent, nothing is traced.
 * `edge`: 'yoga' sends every HTTP request through Yoga's edge (tests compare the edges; 'node', the default, answers
 * JSON POSTs on node:http).
 */
export async function startGateway(config: Config, options: { log?: Logger; tracing?: Tracing; edge?: 'node' | 'yoga' } = {}): Promise<Gateway> {
  const log = options.log ?? createLogger(config.LOG_LEVEL);
  const started = await startServices(config, log);
  const { database, bus, services, workers } = started;
  let draining = false;
  const ready = createReadiness({ db: database.prisma, ...(database.poolStats && { pool: database.poolStats }), ...(database.disk && { disk: database.disk }), bus, loops: services.loops, draining: () => draining });
  let http: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    // The console's operations are trusted whenever it is served, so that it works for callers held to the list (a
    // token, by default) without the operator naming its manifest; it sends every operation by id.
    const consoleManifest = config.CONSOLE ? readConsoleManifest() : null;
    const api = createApi(config, services, log, { traceOperation: options.tracing?.traceOperation, traceLegacyCall: options.tracing?.traceLegacyCall, consoleManifest });
    http = await startHttpServer({ config, log, services, api, consoleManifest: consoleManifest?.text ?? null, ready, edge: options.edge, traceRequests: options.tracing?.traceRequests });
  } catch (error) {
    await started.close(Date.now() + config.SHUTDOWN_GRACE_MS);
    throw error;
  }
  for (const worker of workers) worker.start();
  log.info({ url: http.url, pid: process.pid, database: database.kind, auth: config.AUTH }, `gateway listening; GraphiQL at ${http.url}/graphql${config.CONSOLE ? `, the console at ${http.url}/console` : ''}`);
  if (config.AUTH === 'off') {
    log.warn({ host: config.HOST }, 'authentication is OFF (AUTH=off): every request is served without an API key; allowed on loopback only');
  }
  await warnWhenNoApiKey(services.db, config, log);

  let closing: Promise<void> | undefined;
  return {
    url: http.url,
    port: http.port,
    services,
    database,
    log,
    yoga: http.yoga,
    close() {
      closing ??= (async () => {
        const startedAt = Date.now();
        draining = true;
        // The phases run side by side inside SHUTDOWN_GRACE_MS: workers stop claiming at once and finish or hand
        // back their work by `deadline`, while the HTTP side drains. What is left of the grace closes the database.
        const deadline = startedAt + config.SHUTDOWN_GRACE_MS - Math.min(1000, Math.floor(config.SHUTDOWN_GRACE_MS / 10));
        const [stopped] = await Promise.allSettled([Promise.all(workers.map((w) => w.stop(deadline))), http.drain(startedAt)]);
        if (stopped.status === 'rejected') log.error({ err: stopped.reason }, 'a worker failed to stop cleanly');
        // Closing ends a little before the grace does, so that the process's own exit timer never has to.
        const closedBy = startedAt + config.SHUTDOWN_GRACE_MS - Math.min(500, Math.floor(config.SHUTDOWN_GRACE_MS / 20));
        await started.close(closedBy);
        // Last, so that the spans of the drain are exported too.
        if (options.tracing) await untilDeadline(options.tracing.shutdown(), Math.max(0, closedBy - Date.now()));
      })();
      return closing;
    },
  };
}
