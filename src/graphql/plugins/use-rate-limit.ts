import type { Plugin } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import type { RateLimiter } from '../../access/rate-limit.js';
import type { GraphQLContext } from '../context.js';
import type { GatewayMetrics } from '../../runtime/metrics.js';
import { carriesHttpStatus, refusal } from './operation.js';

// Every operation an API key runs spends one token of its bucket (RATE_LIMIT_PER_MINUTE); a refused one
// answers RATE_LIMITED with retryAfterSeconds (HTTP 429 and Retry-After; JSON-RPC -32029).
// Requests without a key (AUTH=off only) are not limited.

export function useRateLimit(limiter: RateLimiter, metrics?: GatewayMetrics): Plugin<GraphQLContext> {
  const guard = async (ctx: Partial<GraphQLContext> & { request?: Request }, stop: (r: ExecutionResult) => void) => {
    if (!ctx.principal) return;
    const decision = await limiter.take(ctx.principal.keyId);
    if (decision.allowed) return;
    metrics?.rejected.inc({ reason: 'rate_limited' });
    const seconds = decision.retryAfterSeconds;
    stop({
      errors: [
        refusal(
          `Rate limit exceeded for this API key; retry after ${seconds} s.`,
          'RATE_LIMITED',
          carriesHttpStatus(ctx.request) ? 429 : undefined,
          { retryAfterSeconds: seconds },
          { 'Retry-After': String(seconds) },
        ),
      ],
    });
  };
  return {
    onExecute: ({ args, setResultAndStopExecution }) => guard(args.contextValue, setResultAndStopExecution),
    onSubscribe: ({ args, setResultAndStopExecution }) => guard(args.contextValue, setResultAndStopExecution),
  };
}
