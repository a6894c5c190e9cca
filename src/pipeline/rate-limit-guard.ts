import type { RateLimiter } from '../access/rate-limit.js';
import type { GraphQLContext } from '../schema/context.js';
import type { Principal } from '../access/principal.js';
import type { GatewayMetrics } from '../kit/metrics.js';
import { refusal } from './operation.js';
import type { OperationGuard } from './guards.js';

// Every operation a caller runs spends one token of its bucket (RATE_LIMIT_PER_MINUTE, src/access/rate-limit.ts): an
// API key's, or a bearer token subject's (every token of one subject shares it). A refused one answers RATE_LIMITED
// with retryAfterSeconds (HTTP 429 and Retry-After; JSON-RPC -32029). Requests without a caller (AUTH=off only) are not limited.

export function rateLimitGuard(limiter: RateLimiter, metrics?: GatewayMetrics): OperationGuard {
  return ({ contextValue }) => {
    const ctx = contextValue as Partial<GraphQLContext>;
    const principal = ctx.principal;
    if (!principal) return null;
    // Synchronous while the caller's tokens are in hand: no promise on the hot path.
    const decision = limiter.take(principal.id);
    if (decision instanceof Promise) return decision.then((d) => (d.allowed ? null : refused(ctx.httpStatus === true, principal, d.retryAfterSeconds)));
    return decision.allowed ? null : refused(ctx.httpStatus === true, principal, decision.retryAfterSeconds);
  };

  function refused(withHttpStatus: boolean, principal: Principal, seconds: number) {
    metrics?.rejected.inc({ reason: 'rate_limited' });
    return {
      errors: [
        refusal(
          `Rate limit exceeded for this ${principal.kind === 'key' ? 'API key' : 'token\'s subject'}; retry after ${seconds} s.`,
          'RATE_LIMITED',
          withHttpStatus,
          { retryAfterSeconds: seconds },
          { 'Retry-After': String(seconds) },
        ),
      ],
    };
  }
}
