import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createYoga, type YogaServerInstance } from 'graphql-yoga';
import type { GraphQLError } from 'graphql';
import type { Config } from './config.js';
import { AppError } from './errors.js';
import { databaseOptions, openDatabase, type Database } from './db/client.js';
import { prepareDatabase } from './db/startup.js';
import { isDatabaseUnavailable } from './db/errors.js';
import { startEventBus } from './events/bus.js';
import { buildSchema } from './graphql/schema.js';
import { maskError } from './graphql/errors.js';
import type { AppServices } from './services.js';
import { useHealth } from './graphql/plugins/use-health.js';
import { useLegacyRoutes } from './graphql/plugins/use-legacy-routes.js';
import { legacyDoor } from './rest/legacy-door.js';
import { legacyNodeDoor } from './http/legacy-node-door.js';
import { allRpcRoutes } from './rest/routes.js';
import { allHttpRoutes } from './rest/http-routes.js';
import { createLogger, type Logger } from './log.js';
import type { Worker } from './runtime/types.js';
import { createWorkers } from './runtime/workers.js';
import { seedDemoData } from './identity/demo.js';
import { CmsVerifierPool } from './signatures/pool.js';
import { TrustStore } from './signatures/trust.js';
import { createJobExecutor } from './scheduler/executor.js';
import { refuseDeleteWhileRunning } from './tasks/tasks.js';
import { createSchedulerTaskCreator } from './tasks/scheduler-task-creator.js';
import { createKeyVerifier } from './access/api-keys.js';
import { createRateLimiter } from './access/rate-limit.js';
import { createMetrics } from './runtime/metrics.js';
import { createLoopRegistry } from './runtime/supervised-loop.js';
import { faultBackoff } from './runtime/backoff.js';
import { untilDeadline } from './runtime/deadline.js';
import { createReadiness } from './runtime/readiness.js';
import { keyRequirement, useAccessControl } from './graphql/plugins/use-access-control.js';
import { rateLimitGuard } from './graphql/plugins/rate-limit-guard.js';
import { useQueryLimits } from './graphql/plugins/use-query-limits.js';
import { useBodyLimit } from './graphql/plugins/use-body-limit.js';
import { useRequestId } from './graphql/plugins/use-request-id.js';
import { useMetrics } from './graphql/plugins/use-metrics.js';
import { storableInputGuard } from './graphql/plugins/storable-input-guard.js';
import { useOperationGuards } from './graphql/plugins/operation-guards.js';
import { operationRunner } from './graphql/run-operation.js';
import { useCompiledExecution } from './graphql/plugins/use-compiled-execution.js';
import { useRequestDeadline } from './graphql/plugins/use-request-deadline.js';
import { useDirectGraphQL } from './graphql/plugins/use-direct-graphql.js';
import { compilePath } from './rest/http-route.js';
import { startWsServer } from './graphql/ws-server.js';
import { OutboundPolicy } from './http/outbound-policy.js';
import { corsFor, useBrowserPolicy } from './graphql/plugins/use-browser-policy.js';
import { browserRefusal } from './http/browser-policy.js';
import { listen } from './http/listen.js';
import { frontDoor } from './http/front-door.js';
import { takesUpgrade } from './http/request-target.js';
import { answerClientError, refuseConnect } from './http/client-error.js';
import { ReasonPhraseResponse } from './http/reason-phrase.js';
import { useNotFound } from './graphql/plugins/use-not-found.js';
import { useGraphiQL } from './graphql/plugins/use-graphiql.js';
import { useCallerHeaders } from './graphql/plugins/use-caller-headers.js';
import { useCachePolicy } from './graphql/plugins/use-cache-policy.js';
import { useEventStreamStatus } from './graphql/plugins/use-event-stream-status.js';
import { useOpenSubscriptions } from './graphql/plugins/use-open-subscriptions.js';
import { createSubscriptionRegistry } from './runtime/subscription-registry.js';
import type { Tracing } from './telemetry/tracing.js';


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
  const database = await openDatabase({ ...databaseOptions(config), log });
  let draining = false;
  try {
    const migrations = await prepareDatabase(database, { databaseUrl: config.DATABASE_URL, connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS, migrateOnStart: config.MIGRATE_ON_START }, log);
    if (migrations.pending.length === 0 && config.IDENTITY_DEMO_DATA && !config.DATABASE_URL && (await seedDemoData(database.prisma))) log.info('identity demo data loaded');
  } catch (error) {
    await database.close();
    throw error;
  }
  const loops = createLoopRegistry();
  let bus: Awaited<ReturnType<typeof startEventBus>>;
  try {
    bus = await startEventBus(database, log.child({ component: 'event-bus' }));
  } catch (error) {
    await database.close();
    throw error;
  }
  // Events may have been missed while the LISTEN connection was away: every worker polls, every retry tries now.
  bus.onResync(() => loops.pollAll());
  let trust: TrustStore;
  try {
    trust = new TrustStore(database.prisma, config, bus);
  } catch (error) {
    await bus.close();
    await database.close();
    throw error;
  }
  const metrics = createMetrics(database.prisma, log, database.disk);
  const outbound = new OutboundPolicy(config.OUTBOUND_ALLOW);
  const services: AppServices = {
    db: database.prisma,
    config,
    bus,
    queueDeleteGuards: [refuseDeleteWhileRunning],
    trust,
    verifier: new CmsVerifierPool(config.CMS_WORKERS),
    jobExecutor: createJobExecutor(database.prisma, log.child({ worker: 'job-executor' }), { loops, backoff: faultBackoff(config), outbound }),
    keys: createKeyVerifier(database.prisma, config.AUTH_CACHE_MS),
    rateLimiter: createRateLimiter(database.prisma, database.kind, config.RATE_LIMIT_PER_MINUTE, { log: log.child({ component: 'rate-limit' }), metrics }),
    metrics,
    outbound,
    loops,
    subscriptions: createSubscriptionRegistry({
      maxPerKey: config.MAX_SUBSCRIPTIONS_PER_KEY,
      maxBufferedBytes: config.SUBSCRIPTION_MAX_BUFFERED_BYTES,
      log: log.child({ component: 'subscriptions' }),
      gauge: metrics.subscriptionsOpen,
    }),
    log,
  };
  services.jobExecutor.bindTaskCreator(createSchedulerTaskCreator(services));
  const workers: Worker[] = createWorkers(services, log);
  const rpcRoutes = allRpcRoutes(config);
  const httpRoutes = allHttpRoutes(config);
  const fixedPaths = new Set(['/graphql', '/rpc', '/healthz', '/readyz', '/metrics', '/openapi.json', ...rpcRoutes.map((r) => r.path)]);
  const templates = httpRoutes.map((r) => ({ path: r.path as string, match: compilePath(r.path) }));
  const pathLabel = (pathname: string) => (fixedPaths.has(pathname) ? pathname : (templates.find((t) => t.match(pathname))?.path ?? 'other'));

  const browserPolicy = { corsOrigins: config.CORS_ORIGINS, loopbackHostOnly: config.AUTH === 'off' };
  // Plugins whose parts the legacy paths' operation runner uses too (see below).
  const requestIds = useRequestId(log);
  const cachePolicy = useCachePolicy({ corsOrigins: config.CORS_ORIGINS });
  const metricsPlugin = useMetrics({ metrics, auth: config.AUTH, keys: services.keys, pathLabel });
  const accessControl = useAccessControl({ auth: config.AUTH, keys: services.keys, metrics });
  const queryLimits = useQueryLimits(
    {
      maxDepth: config.GRAPHQL_MAX_DEPTH,
      maxAliases: config.GRAPHQL_MAX_ALIASES,
      maxCost: config.GRAPHQL_MAX_COST,
      defaultPageSize: config.DEFAULT_PAGE_SIZE,
      maxPageSize: config.MAX_PAGE_SIZE,
      unpagedListSize: config.GRAPHQL_UNPAGED_LIST_SIZE,
    },
    metrics,
  );
  // Every operation passes these, in this order, on every door.
  const guards = [accessControl.guard, rateLimitGuard(services.rateLimiter, metrics), storableInputGuard(), queryLimits.guard];
  const schema = buildSchema();
  const legacy = legacyDoor({
    rpcRoutes,
    httpRoutes,
    env: { defaultPageSize: config.DEFAULT_PAGE_SIZE },
    maxBatchCalls: config.MAX_BATCH_CALLS,
    requireKey: keyRequirement(config.AUTH, services.keys),
    runGraphQL: () => runOperation,
    traceCall: options.tracing?.traceLegacyCall,
  });
  const yoga: YogaServerInstance<Record<string, unknown>, AppServices> = createYoga<Record<string, unknown>, AppServices>({
    schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // GraphiQL is served by useGraphiQL below (Yoga's own page loads it from a CDN).
    graphiql: false,
    maskedErrors: { maskError },
    // MAX_BODY_BYTES is enforced by useBodyLimit below, before Yoga reads a body. Yoga's own 25 MB limit would pipe
    // every body through a counting stream (a TransformStream, a second Request and an AbortController per request).
    maxRequestBodySize: false,
    cors: corsFor(browserPolicy),
    logging: {
      debug: (...args) => log.debug(args.map(String).join(' ')),
      info: (...args) => log.info(args.map(String).join(' ')),
      warn: (...args) => log.warn(args.map(String).join(' ')),
      error: (...args) => {
        const err = args.find((a): a is Error => a instanceof Error);
        // A client's mistake (an AppError, or a GraphQL error with no cause behind it) is not the gateway's error.
        const cause = (err as { originalError?: unknown } | undefined)?.originalError;
        const clientError = err !== undefined && (cause instanceof AppError || (err.name === 'GraphQLError' && cause === undefined));
        // An outage is announced by the workers and the event bus; each request that meets it is only a warning.
        const outage = err !== undefined && isDatabaseUnavailable(cause ?? err);
        (clientError ? log.debug.bind(log) : outage ? log.warn.bind(log) : log.error.bind(log))({ err }, args.map(String).join(' '));
      },
    },
    context: () => services,
    plugins: [
      requestIds,
      useCallerHeaders(),
      cachePolicy,
      ...(options.tracing?.plugins ?? []),
      useBrowserPolicy(browserPolicy),
      metricsPlugin,
      useEventStreamStatus(),
      ...(config.GRAPHIQL ? [useGraphiQL({ endpoint: '/graphql', title: 'Public-services gateway', auth: config.AUTH })] : []),
      // With AUTH=on a request without a valid key is 401 before its body or its type is looked at.
      accessControl.keyFirst('/graphql'),
      useBodyLimit({ endpoint: '/graphql', maxBodyBytes: config.MAX_BODY_BYTES }),
      ...(options.edge === 'yoga' ? [] : [useDirectGraphQL({
        endpoint: '/graphql',
        runner: () => runDirectly,
        admits: accessControl.admits,
        nestsWithinLimit: queryLimits.nestsWithinLimit,
      })]),
      accessControl,
      useOperationGuards(guards),
      // After the guards: a refused subscription never counts against its key's cap.
      useOpenSubscriptions(services.subscriptions, metrics),
      useCompiledExecution({ compileAfter: config.GRAPHQL_JIT_AFTER_RUNS }),
      useRequestDeadline(config.REQUEST_DEADLINE_MS),
      queryLimits,
      useHealth({ ready: createReadiness({ db: database.prisma, ...(database.poolStats && { pool: database.poolStats }), ...(database.disk && { disk: database.disk }), bus, loops, draining: () => draining }) }),
      useLegacyRoutes({ door: legacy, maxBodyBytes: config.MAX_BODY_BYTES }),
      useNotFound({ graphqlEndpoint: '/graphql', graphiql: config.GRAPHIQL }),
    ],
  });

  // Legacy routes execute their (codegen-checked, static) documents with the caller's request, and /graphql its common
  // requests (useDirectGraphQL): directly, with Yoga's context parts, guards, metrics and masking. Traced or not, the
  // same door and executor run: tracing adds the operation span as a hook (`trace`).
  const runDirectly = operationRunner({
    schema,
    contextOf: async (request, params) => ({ request, params, ...services, ...requestIds.contextOf(request), ...(await accessControl.callerOf(request)) }),
    guards,
    compileAfter: config.GRAPHQL_JIT_AFTER_RUNS,
    deadlineMs: config.REQUEST_DEADLINE_MS,
    ...(options.tracing && { trace: options.tracing.traceOperation }),
    observe: metricsPlugin.observeOperation,
    mask: (error) => {
      const masked = maskError(error, 'Unexpected error.');
      if (masked !== error) yoga.logger.error(error);
      return masked as GraphQLError;
    },
  });
  const runOperation = runDirectly.runRoute;

  // Plain legacy calls skip Yoga's fetch adapter (src/http/legacy-node-door.ts), traced or not: the HTTP
  // instrumentation's server span wraps node:http's request handler, and the route and operation spans are hooks.
  const legacyOverNode =
    options.edge === 'yoga'
      ? undefined
      : legacyNodeDoor({
          door: legacy,
          maxBodyBytes: config.MAX_BODY_BYTES,
          browserPolicy,
          Request: yoga.fetchAPI.Request,
          edges: [requestIds, metricsPlugin, cachePolicy],
          onError: (error) => log.error({ err: error }, 'a legacy path failed to answer'),
        });
  const server: Server = createServer(
    {
      ServerResponse: ReasonPhraseResponse,
      // A slow client (headers or body trickling in) is answered 408 and cut; an answer being streamed (SSE) is not
      // a request being received, and an upgraded socket (graphql-ws) has left the HTTP parser: neither is cut.
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      // How often node:http looks for such clients (its default, 30 s, would let them stay that much longer).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.HTTP_HEADERS_TIMEOUT_MS / 4))),
      // Only a WebSocket upgrade of /graphql is taken; any other (h2c from `curl --http2`) is served over HTTP/1.1.
      shouldUpgradeCallback: (req) => takesUpgrade(req, '/graphql'),
      // A missing Host is the front door's 400 (JSON, request id), not node:http's empty one.
      requireHostHeader: false,
    },
    frontDoor({
      browserPolicy,
      Request: yoga.fetchAPI.Request,
      edges: [requestIds, metricsPlugin, cachePolicy],
      serve: legacyOverNode ? (req, res) => legacyOverNode(req, res) || void yoga(req, res) : (req, res) => void yoga(req, res),
    }),
  );
  server.on('clientError', answerClientError(log));
  server.on('connect', refuseConnect(log));
  try {
    await listen(server, config.PORT, config.HOST);
  } catch (error) {
    services.trust.close();
    await services.verifier.close();
    await bus.close();
    await database.close();
    throw error;
  }
  // Attached only once the port is open: a WebSocketServer re-emits its HTTP server's errors, so a busy port would
  // also surface as graphql-ws's "Internal error emitted on the WebSocket server" with a stack.
  const wsServer = startWsServer({ server, yoga, services, acceptUpgrade: (req) => browserRefusal(browserPolicy, { host: req.headers.host, origin: req.headers.origin }) === null });
  const port = (server.address() as AddressInfo).port;
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  for (const worker of workers) worker.start();
  log.info({ url, pid: process.pid, database: database.kind, auth: config.AUTH }, `gateway listening; GraphiQL at ${url}/graphql`);
  if (config.AUTH === 'off') {
    log.warn({ host: config.HOST }, 'authentication is OFF (AUTH=off): every request is served without an API key; allowed on loopback only');
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    services,
    database,
    log,
    yoga,
    close() {
      closing ??= (async () => {
        const startedAt = Date.now();
        draining = true;
        // The phases run side by side inside SHUTDOWN_GRACE_MS: workers stop claiming at once and finish or hand
        // back their work by `deadline`, while the HTTP side keeps answering through SHUTDOWN_READY_DELAY_MS (so
        // load balancers see /readyz 503) and then drains. What is left of the grace closes the database.
        const deadline = startedAt + config.SHUTDOWN_GRACE_MS - Math.min(1000, Math.floor(config.SHUTDOWN_GRACE_MS / 10));
        const workersStopped = Promise.all(workers.map((w) => w.stop(deadline)));
        const httpClosed = (async () => {
          if (config.SHUTDOWN_READY_DELAY_MS > 0) await new Promise((r) => setTimeout(r, config.SHUTDOWN_READY_DELAY_MS));
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeIdleConnections();
          await wsServer.dispose();
          // Requests in flight may finish within half the grace time; then open streams (SSE) are cut.
          const cut = setTimeout(() => server.closeAllConnections(), Math.max(0, startedAt + Math.floor(config.SHUTDOWN_GRACE_MS / 2) - Date.now()));
          await closed;
          clearTimeout(cut);
        })();
        const [stopped] = await Promise.allSettled([workersStopped, httpClosed]);
        if (stopped.status === 'rejected') log.error({ err: stopped.reason }, 'a worker failed to stop cleanly');
        services.trust.close();
        await services.verifier.close();
        await untilDeadline(services.rateLimiter.close(), Math.max(0, startedAt + config.SHUTDOWN_GRACE_MS - Date.now()));
        await bus.close();
        await untilDeadline(database.close(), Math.max(0, startedAt + config.SHUTDOWN_GRACE_MS - Date.now()));
        // Last, so that the spans of the drain are exported too.
        if (options.tracing) await untilDeadline(options.tracing.shutdown(), Math.max(0, startedAt + config.SHUTDOWN_GRACE_MS - Date.now()));
      })();
      return closing;
    },
  };
}
