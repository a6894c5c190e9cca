import { GraphQLError, type ExecutionResult } from 'graphql';
import { withDeadline } from '../kit/request-deadline.js';
import { ServiceUnavailableError } from '../errors.js';

// Queries and mutations answer by REQUEST_DEADLINE_MS at the latest, whatever they wait on (src/kit/request-deadline.ts).
// Subscriptions are not operations with an end: their reads have their own retry (src/events/live.ts).

/** `run()` within `deadlineMs`; past it, an answer whose one error is SERVICE_UNAVAILABLE (masked as any error is). */
export async function resultWithinDeadline(deadlineMs: number, run: () => ExecutionResult | Promise<ExecutionResult>): Promise<ExecutionResult> {
  try {
    return await withDeadline(deadlineMs, async () => run());
  } catch (error) {
    if (!(error instanceof ServiceUnavailableError)) throw error;
    return { errors: [new GraphQLError(error.message, { originalError: error })] };
  }
}
