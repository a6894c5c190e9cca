import type { Plugin } from 'graphql-yoga';
import { METRICS_SCOPE } from '../../access/access-rules.js';
import { hasScope } from '../../access/principal.js';
import { insufficientScope } from '../../access/bearer-challenge.js';
import { unavailableError } from '../../db/errors.js';
import type { GatewayMetrics } from '../../kit/metrics.js';
import { requestContextOf } from './use-request-context.js';

// `GET /metrics` in Prometheus text format (src/kit/metrics.ts holds the counters; src/pipeline/observe.ts counts
// requests and operations). With AUTH=on it needs a caller holding metrics:read or admin:all: the request's one
// verdict (src/pipeline/request-context.ts), answered in this path's own JSON envelope.

export function useMetricsEndpoint(options: { metrics: GatewayMetrics; auth: 'on' | 'off' }): Plugin {
  const { metrics } = options;
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });
  return {
    async onRequest({ request, url, endResponse, serverContext }) {
      if (url.pathname !== '/metrics') return;
      if (request.method !== 'GET') return endResponse(json(405, { error: { status: 405, code: 'METHOD_NOT_ALLOWED', message: '/metrics accepts GET only' } }, { allow: 'GET' }));
      if (options.auth === 'on') {
        const context = requestContextOf(serverContext);
        try {
          const refused = await context.admission();
          if (refused?.kind === 'unauthenticated') {
            return endResponse(json(401, { error: { status: 401, code: 'UNAUTHENTICATED', message: refused.why.message } }, { 'www-authenticate': refused.why.challenge }));
          }
        } catch (error) {
          // The key lookup met an outage: 503 with Retry-After, as on every door; the driver's text is never shown.
          const unavailable = unavailableError(error);
          if (!unavailable) throw error;
          const { httpStatus: status, code, message, retryAfterSeconds } = unavailable;
          return endResponse(json(status, { error: { status, code, message, retryAfterSeconds } }, { 'retry-after': String(retryAfterSeconds) }));
        }
        const { principal } = await context.caller();
        if (principal && !hasScope(principal, METRICS_SCOPE)) {
          const message = `This ${principal.kind === 'key' ? 'API key' : 'token'} lacks the scope ${METRICS_SCOPE}.`;
          return endResponse(json(403, { error: { status: 403, code: 'FORBIDDEN', message, requiredScopes: [METRICS_SCOPE] } }, { 'www-authenticate': insufficientScope([METRICS_SCOPE]) }));
        }
      }
      endResponse(new Response(await metrics.registry.metrics(), { headers: { 'content-type': metrics.registry.contentType } }));
    },
  };
}
