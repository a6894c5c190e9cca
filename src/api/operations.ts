import { readFileSync } from 'node:fs';
import type { GraphQLError, GraphQLSchema } from 'graphql';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { AppServices } from '../services.js';
import type { Tracing } from '../telemetry/tracing.js';
import { buildSchema } from '../schema/schema.js';
import { maskError } from '../pipeline/mask-error.js';
import { rateLimitGuard } from '../pipeline/rate-limit-guard.js';
import { queryLimitsGuard } from '../pipeline/query-limits.js';
import { accessControl as createAccessControl } from '../pipeline/access.js';
import { callerIdentifier, type CallerIdentifier } from '../access/caller.js';
import { carriesHttpStatus } from '../pipeline/operation.js';
import { storableInputGuard } from '../pipeline/storable-input-guard.js';
import { createDocuments } from '../pipeline/documents.js';
import { loadTrustedDocuments } from '../pipeline/trusted-documents.js';
import { createPipeline, type OperationRequest, type Pipeline } from '../pipeline/pipeline.js';
import { legacyDoor, type LegacyDoor } from './legacy/legacy-door.js';
import { allRpcRoutes } from './legacy/routes.js';
import { allHttpRoutes } from './legacy/http-routes.js';
import { compilePath } from './legacy/http-route.js';
import { originalRequest } from '../edge/plugins/remade-request.js';
import { useRequestId } from '../edge/plugins/use-request-id.js';
import { useMetrics } from '../edge/plugins/use-metrics.js';
import { useCachePolicy } from '../edge/plugins/use-cache-policy.js';
import { logFailure } from './log-failure.js';
import { readConsoleManifest } from '../edge/console/assets.js';
import { objectSlot } from '../runtime/object-slot.js';

// The gateway's API, whatever the door: the schema, the one pipeline its operations run on (with the guards every
// operation passes, in order), the legacy door that turns documented paths into operations of that pipeline, and
// the request edges every HTTP door shares (request id and access line, metrics, cache policy).

export interface Api {
  schema: GraphQLSchema;
  pipeline: Pipeline;
  legacy: LegacyDoor;
  /** An HTTP request's side of its operations (request id, caller), made once per request. */
  operationRequest(request: Request): OperationRequest;
  accessControl: ReturnType<typeof createAccessControl>;
  /** Who calls, from a credential (API key or bearer token): graphql-ws asks it at connection_init. */
  identifier: CallerIdentifier;
  /** The console's manifest of trusted documents as read at start-up (CONSOLE=on and the console built), else null. */
  consoleManifest: string | null;
  requestIds: ReturnType<typeof useRequestId>;
  metrics: ReturnType<typeof useMetrics>;
  cachePolicy: ReturnType<typeof useCachePolicy>;
}

export function createApi(config: Config, services: AppServices, log: Logger, tracing?: Tracing): Api {
  const { metrics } = services;
  const rpcRoutes = allRpcRoutes(config);
  const httpRoutes = allHttpRoutes(config);
  const fixedPaths = new Set(['/graphql', '/rpc', '/healthz', '/readyz', '/metrics', '/openapi.json', ...rpcRoutes.map((r) => r.path)]);
  const templates = httpRoutes.map((r) => ({ path: r.path as string, match: compilePath(r.path) }));
  const pathLabel = (pathname: string) => (fixedPaths.has(pathname) ? pathname : (templates.find((t) => t.match(pathname))?.path ?? 'other'));

  const requestIds = useRequestId(log);
  const identifier = callerIdentifier(services.keys, services.tokens);
  const accessControl = createAccessControl({ auth: config.AUTH, identifier, metrics });
  const metricsEdge = useMetrics({ metrics, auth: config.AUTH, callerOf: accessControl.callerOf, pathLabel });
  const queryLimits = queryLimitsGuard(
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
  const schema = buildSchema();
  const failed = logFailure(log);
  // The console's own operations are trusted whenever it is served, so that it works for callers held to the list
  // (a token, by default) without the operator naming its manifest; it sends every operation by id.
  const consoleManifest = config.CONSOLE ? readConsoleManifest() : null;
  const manifests = [...config.TRUSTED_DOCUMENTS_MANIFESTS, ...(consoleManifest ? [consoleManifest.path] : [])];
  const { documents: trusted, invalid } = loadTrustedDocuments({ paths: manifests, policy: config.TRUSTED_DOCUMENTS, schema }, (path) =>
    path === consoleManifest?.path ? consoleManifest.text : readFileSync(path, 'utf8'),
  );
  if (manifests.length) log.info({ manifests, documents: trusted.size, listedOnly: [...config.TRUSTED_DOCUMENTS] }, 'trusted documents loaded');
  if (config.CONSOLE && !consoleManifest) log.warn('the console is not built: it will not be served until it is built and the gateway restarted (npm run build)');
  // Not a reason to refuse the start: a front end built against an older contract still runs its other documents.
  for (const { manifest, id, message } of invalid) log.warn({ manifest, id }, `a trusted document does not validate against the schema: ${message}`);
  const pipeline = createPipeline({
    schema,
    auth: config.AUTH,
    documents: createDocuments({ schema, maxDepth: config.GRAPHQL_MAX_DEPTH, metrics, pinned: trusted.parsed }),
    trusted,
    services: services as unknown as Record<string, unknown>,
    // Every operation passes these, in this order, on every door.
    guards: [accessControl.guard, rateLimitGuard(services.rateLimiter, metrics), storableInputGuard(), queryLimits],
    observe: metricsEdge.observeOperation,
    subscribed: metricsEdge.observeSubscription,
    metrics,
    compileAfter: config.GRAPHQL_JIT_AFTER_RUNS,
    deadlineMs: config.REQUEST_DEADLINE_MS,
    trace: tracing?.traceOperation,
    subscriptions: services.subscriptions,
    credentials: services.credentials,
    mask: (error) => {
      const masked = maskError(error, 'Unexpected error.');
      if (masked !== error) failed(error);
      return masked as GraphQLError;
    },
  });
  const operations = objectSlot<Request, OperationRequest>('operation request');
  const operationRequest = (given: Request): OperationRequest => {
    const request = originalRequest(given);
    let made = operations.get(request);
    if (!made) {
      const { requestId, log: requestLog } = requestIds.contextOf(request);
      made = { request: given, method: request.method, httpStatus: carriesHttpStatus(request), requestId, log: requestLog, caller: () => accessControl.callerOf(request) };
      operations.set(request, made);
    }
    return made;
  };
  const legacy = legacyDoor({
    rpcRoutes,
    httpRoutes,
    env: { defaultPageSize: config.DEFAULT_PAGE_SIZE },
    maxBatchCalls: config.MAX_BATCH_CALLS,
    requireCaller: accessControl.callerRefusal,
    runGraphQL: () => (request, document, query, variables) => pipeline.runRoute(operationRequest(request), document, query, variables),
    traceCall: tracing?.traceLegacyCall,
  });
  return { schema, pipeline, legacy, operationRequest, accessControl, identifier, consoleManifest: consoleManifest?.text ?? null, requestIds, metrics: metricsEdge, cachePolicy: useCachePolicy({ corsOrigins: config.CORS_ORIGINS }) };
}
