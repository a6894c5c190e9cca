import type { Plugin } from 'graphql-yoga';
import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import { METRICS_SCOPE } from '../../access/access-rules.js';
import { hasScope } from '../../access/principal.js';
import { insufficientScope } from '../../access/bearer-challenge.js';
import type { CallerContext } from '../../pipeline/access.js';
import { unavailableError } from '../../db/errors.js';
import type { GatewayMetrics } from '../../runtime/metrics.js';
import { operationShape } from '../../pipeline/operation.js';
import { originalRequest } from './remade-request.js';
import type { RequestEdge } from './use-request-id.js';
import { objectSlot } from '../../runtime/object-slot.js';

type OperationArgs = { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null | undefined };

// `GET /metrics` in Prometheus text format (with AUTH=on it needs a caller holding metrics:read or admin:all),
// and the counters it shows: HTTP requests by path template, GraphQL root fields by outcome, latencies.

export interface MetricsOptions {
  metrics: GatewayMetrics;
  auth: 'on' | 'off';
  /** The request's caller (src/pipeline/access.ts), as every door asks it. */
  callerOf(request: Request): Promise<CallerContext>;
  /** Maps a request path onto a bounded label (a route template, or "other"). */
  pathLabel: (pathname: string) => string;
}

/** `observeOperation` counts and times one operation of the pipeline; `observeSubscription` counts one that started. */
export function useMetrics(options: MetricsOptions): Plugin & RequestEdge & { observeOperation(args: OperationArgs): (result: ExecutionResult | undefined) => void; observeSubscription(args: OperationArgs): void } {
  const { metrics } = options;
  const started = objectSlot<Request, number>('request start');
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });

  const observe = (type: string, fields: string[], result: ExecutionResult | undefined, seconds: number) => {
    const code = result?.errors?.[0]?.extensions?.code;
    const outcome = result?.errors?.length ? (typeof code === 'string' ? code : 'ERROR') : 'ok';
    for (const field of fields) {
      metrics.operations.inc({ type, field, outcome });
      metrics.operationDuration.observe({ type, field }, seconds);
    }
  };

  const observeOperation = (args: OperationArgs) => {
    const shape = operationShape(args.schema, args.document, args.operationName);
    const fields = shape?.rootFields.map((f) => f.name) ?? [];
    const start = performance.now();
    return (result: ExecutionResult | undefined) => observe(shape?.type ?? 'unknown', fields, result, (performance.now() - start) / 1000);
  };

  const observeSubscription = (args: OperationArgs) => {
    const shape = operationShape(args.schema, args.document, args.operationName);
    for (const f of shape?.rootFields ?? []) metrics.operations.inc({ type: 'subscription', field: f.name, outcome: 'subscribed' });
  };

  const begin = (request: Request) => {
    started.set(request, performance.now());
  };
  const finish = (request: Request, pathname: string, status: number) => {
    const start = started.get(originalRequest(request));
    if (start === undefined) return undefined;
    const path = options.pathLabel(pathname);
    metrics.httpRequests.inc({ method: request.method, path, status: String(status) });
    metrics.httpDuration.observe({ method: request.method, path }, (performance.now() - start) / 1000);
    return undefined;
  };

  return {
    observeOperation,
    observeSubscription,
    begin,
    finish,
    async onRequest({ request, url, endResponse }) {
      begin(request);
      if (url.pathname !== '/metrics') return;
      if (request.method !== 'GET') return endResponse(json(405, { error: { status: 405, code: 'METHOD_NOT_ALLOWED', message: '/metrics accepts GET only' } }, { allow: 'GET' }));
      if (options.auth === 'on') {
        let caller: CallerContext;
        try {
          caller = await options.callerOf(request);
        } catch (error) {
          // The key lookup met an outage: 503 with Retry-After, as on every door; the driver's text is never shown.
          const unavailable = unavailableError(error);
          if (!unavailable) throw error;
          const { httpStatus: status, code, message, retryAfterSeconds } = unavailable;
          return endResponse(json(status, { error: { status, code, message, retryAfterSeconds } }, { 'retry-after': String(retryAfterSeconds) }));
        }
        const { principal, unauthenticated } = caller;
        if (!principal) {
          const why = unauthenticated!;
          return endResponse(json(401, { error: { status: 401, code: 'UNAUTHENTICATED', message: why.message } }, { 'www-authenticate': why.challenge }));
        }
        if (!hasScope(principal, METRICS_SCOPE)) {
          const message = `This ${principal.kind === 'key' ? 'API key' : 'token'} lacks the scope ${METRICS_SCOPE}.`;
          return endResponse(json(403, { error: { status: 403, code: 'FORBIDDEN', message, requiredScopes: [METRICS_SCOPE] } }, { 'www-authenticate': insufficientScope([METRICS_SCOPE]) }));
        }
      }
      endResponse(new Response(await metrics.registry.metrics(), { headers: { 'content-type': metrics.registry.contentType } }));
    },
    onResponse({ request, response }) {
      finish(request, new URL(request.url).pathname, response.status);
    },
  };
}
