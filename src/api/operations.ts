import { readFileSync } from 'node:fs';
import type { GraphQLError, GraphQLSchema } from 'graphql';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { AppServices } from '../services.js';
import { buildSchema } from '../schema/schema.js';
import { maskError } from '../pipeline/mask-error.js';
import { rateLimitGuard } from '../pipeline/rate-limit-guard.js';
import { queryLimitsGuard } from '../pipeline/query-limits.js';
import { accessGuard } from '../pipeline/access.js';
import { callerIdentifier, type CallerIdentifier } from '../access/caller.js';
import { createObserver, type Observer } from '../pipeline/observe.js';
import { requestContexts, type Digest } from '../pipeline/request-context.js';
import { storableInputGuard } from '../pipeline/storable-input-guard.js';
import { createDocuments } from '../pipeline/documents.js';
import { loadTrustedDocuments } from '../pipeline/trusted-documents.js';
import { createPipeline, type OperationTracer, type Pipeline } from '../pipeline/pipeline.js';
import { legacyDoor, type LegacyCallTracer, type LegacyDoor } from './legacy/legacy-door.js';
import { allRpcRoutes } from './legacy/routes.js';
import { allHttpRoutes } from './legacy/http-routes.js';
import { compilePath } from './legacy/http-route.js';
import { logFailure } from './log-failure.js';

// The gateway's API, whatever the door: the schema, the one pipeline its operations run on (with the guards every
// operation passes, in order), the legacy door that turns documented paths into operations of that pipeline, how a
// request is digested (its id, its caller) and how it is observed (access line, metrics). The edges (src/edge/) use
// these; nothing here knows a transport.

export interface Api {
  schema: GraphQLSchema;
  pipeline: Pipeline;
  legacy: LegacyDoor;
  /** Makes a request's context (src/pipeline/request-context.ts): each edge digests its request once. */
  digest: Digest;
  /** The access line and counters of every answer (src/pipeline/observe.ts). */
  observer: Observer;
  /** Who calls, from a credential (API key or bearer token): graphql-ws asks it again for each operation. */
  identifier: CallerIdentifier;
}

/** The console's manifest of trusted documents as read at start-up: its path and text (CONSOLE=on and the console built). */
export interface ConsoleManifest {
  path: string;
  text: string;
}

export interface ApiOptions {
  /** Tracing on: each operation in its span (src/telemetry/tracing.ts). */
  traceOperation?: OperationTracer | undefined;
  /** Tracing on: each legacy call in its span. */
  traceLegacyCall?: LegacyCallTracer | undefined;
  consoleManifest?: ConsoleManifest | null | undefined;
}

export function createApi(config: Config, services: AppServices, log: Logger, options: ApiOptions = {}): Api {
  const { metrics } = services;
  const rpcRoutes = allRpcRoutes(config);
  const httpRoutes = allHttpRoutes(config);
  const fixedPaths = new Set(['/graphql', '/rpc', '/healthz', '/readyz', '/metrics', '/openapi.json', ...rpcRoutes.map((r) => r.path)]);
  const templates = httpRoutes.map((r) => ({ path: r.path as string, match: compilePath(r.path) }));
  const pathLabel = (pathname: string) => (fixedPaths.has(pathname) ? pathname : (templates.find((t) => t.match(pathname))?.path ?? 'other'));

  const identifier = callerIdentifier(services.keys, services.tokens);
  const digest = requestContexts({ log, identifier, auth: config.AUTH, metrics });
  const observer = createObserver({ log, metrics, pathLabel });
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
  const consoleManifest = options.consoleManifest ?? null;
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
    guards: [accessGuard({ auth: config.AUTH, metrics }), rateLimitGuard(services.rateLimiter, metrics), storableInputGuard(), queryLimits],
    observe: observer.operation,
    subscribed: observer.subscribed,
    metrics,
    compileAfter: config.GRAPHQL_JIT_AFTER_RUNS,
    deadlineMs: config.REQUEST_DEADLINE_MS,
    trace: options.traceOperation,
    subscriptions: services.subscriptions,
    credentials: services.credentials,
    mask: (error) => {
      const masked = maskError(error, 'Unexpected error.');
      if (masked !== error) failed(error);
      return masked as GraphQLError;
    },
  });
  const legacy = legacyDoor({
    rpcRoutes,
    httpRoutes,
    env: { defaultPageSize: config.DEFAULT_PAGE_SIZE },
    maxBatchCalls: config.MAX_BATCH_CALLS,
    runGraphQL: () => (request, document, query, variables) => pipeline.runRoute(request, document, query, variables),
    traceCall: options.traceLegacyCall,
  });
  return { schema, pipeline, legacy, digest, observer, identifier };
}
