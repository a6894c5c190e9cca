import type { RateLimiter } from '../access/rate-limit.js';
import type { GraphQLContext } from '../schema/context.js';
import type { GatewayMetrics } from '../runtime/metrics.js';
import { carriesHttpStatus, refusal } from './operation.js';
import type { OperationGuard } from './guards.js';

// Every operation an API key runs spends one token of its bucket (RATE_LIMIT_PER_MINUTE, src/access/rate-limit.ts); a refused one
// answers RATE_LIMITED with retryAfterSeconds (HTTP 429 and Retry-After; JSON-RPC -32029).
// Requests without a key (AUTH=off only) are not limited.

export function rateLimitGuard(limiter: RateLimiter, metrics?: GatewayMetrics): OperationGuard {
  return ({ contextValue }) => {
    const ctx = contextValue as Partial<GraphQLContext> & { request?: Request };
    if (!ctx.principal) return null;
    // Synchronous while the key's tokens are in hand: no promise on the hot path.
    const decision = limiter.take(ctx.principal.keyId);
    if (decision instanceof Promise) return decision.then((d) => (d.allowed ? null : refused(ctx.request, d.retryAfterSeconds)));
    return decision.allowed ? null : refused(ctx.request, decision.retryAfterSeconds);
  };

  function refused(request: Request | undefined, seconds: number) {
    metrics?.rejected.inc({ reason: 'rate_limited' });
    return {
      errors: [
        refusal(
          `Rate limit exceeded for this API key; retry after ${seconds} s.`,
          'RATE_LIMITED',
          carriesHttpStatus(request) ? 429 : undefined,
          { retryAfterSeconds: seconds },
          { 'Retry-After': String(seconds) },
        ),
      ],
    };
  }
}
