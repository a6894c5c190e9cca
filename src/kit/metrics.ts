import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

// What one gateway process counts, as every layer that counts something sees it: the request path, the rate limiter,
// the workers. Each process has a registry of its own (several gateways may share a test process); the counters are
// defined here, and src/runtime/metrics.ts adds the gauges it reads from the database on each scrape.

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

/** A registry of its own, with the process metrics (gateway_process_*). */
export function metricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_process_' });
  return registry;
}

/** The counters, histograms and gauges the request path and the workers feed, registered in `registry`. */
export function gatewayMetrics(registry: Registry): GatewayMetrics {
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({ name: 'gateway_http_requests_total', help: 'HTTP requests by method, path (template) and status.', labelNames: ['method', 'path', 'status'] as const, registers }),
    httpDuration: new Histogram({
      name: 'gateway_http_request_duration_seconds',
      help: 'HTTP request latency by method and path (template).',
      labelNames: ['method', 'path'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    operations: new Counter({ name: 'gateway_graphql_operations_total', help: 'GraphQL root fields executed, by operation type, field and outcome.', labelNames: ['type', 'field', 'outcome'] as const, registers }),
    operationDuration: new Histogram({
      name: 'gateway_graphql_operation_duration_seconds',
      help: 'GraphQL execution latency by operation type and root field.',
      labelNames: ['type', 'field'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    wsOperations: new Counter({ name: 'gateway_graphql_ws_operations_total', help: 'graphql-ws operations by type and outcome (ok, error, subscribed).', labelNames: ['type', 'outcome'] as const, registers }),
    rejected: new Counter({ name: 'gateway_rejected_total', help: 'Requests refused before execution, by reason.', labelNames: ['reason'] as const, registers }),
    rateLimitDegraded: new Gauge({
      name: 'gateway_rate_limit_degraded',
      help: '1 while API keys are rate-limited per process because the database bucket cannot be written (read-only or unreachable database), else 0.',
      registers,
    }),
    rateLimitLocal: new Counter({
      name: 'gateway_rate_limit_local_decisions_total',
      help: 'Operations whose rate limit was decided by a per-process bucket, by why the database bucket was not used (read_only, unavailable, error).',
      labelNames: ['reason'] as const,
      registers,
    }),
    deliveries: new Counter({ name: 'gateway_delivery_outcomes_total', help: 'Notification delivery attempts by channel and outcome.', labelNames: ['channel', 'outcome'] as const, registers }),
    subscriptionsOpen: new Gauge({ name: 'gateway_subscriptions_open', help: 'GraphQL subscriptions open now, by transport (graphql-ws, sse).', labelNames: ['transport'] as const, registers }),
    credentialEnds: new Counter({
      name: 'gateway_credential_ends_total',
      help: 'graphql-ws sockets and SSE streams ended because the credential that opened them stopped being valid, by why (revoked: an API key; expired: a bearer token).',
      labelNames: ['why'] as const,
      registers,
    }),
  };
}
