import type { Counter, Gauge, Histogram, Registry } from 'prom-client';

// What one gateway process counts, as every layer that counts something sees it: the request path, the rate limiter,
// the workers. The registry is made, and its gauges read from the database, by src/runtime/metrics.ts.

export interface GatewayMetrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'path' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'path'>;
  /** One count per root field of each executed operation; `outcome` is ok or the error code. */
  readonly operations: Counter<'type' | 'field' | 'outcome'>;
  /** graphql-ws operations, as gateway_http_requests_total counts HTTP requests. */
  readonly wsOperations: Counter<'type' | 'outcome'>;
  readonly operationDuration: Histogram<'type' | 'field'>;
  readonly rejected: Counter<'reason'>;
  /** 1 while API keys are rate-limited per process because the database bucket cannot be written. */
  readonly rateLimitDegraded: Gauge;
  /** Operations whose rate limit was decided per process, by why (read_only, unavailable, error). */
  readonly rateLimitLocal: Counter<'reason'>;
  /** For the delivery worker: one count per delivery attempt. */
  readonly deliveries: Counter<'channel' | 'outcome'>;
  /** Subscriptions open now, by transport (graphql-ws, sse); src/events/subscription-registry.ts. */
  readonly subscriptionsOpen: Gauge<'transport'>;
  /** Sockets and streams ended because their credential stopped being valid, by why (revoked, expired). */
  readonly credentialEnds: Counter<'why'>;
}
