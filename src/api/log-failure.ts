import { AppError } from '../errors.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import type { Logger } from '../log.js';

/**
 * How an error met while answering is logged: a client's mistake (an AppError, or a GraphQL error with no cause
 * behind it) at debug, not as the gateway's error; an outage (announced by the workers and the event bus) as a
 * warning per request; anything else as an error.
 */
export function logFailure(log: Logger): (err: unknown, message?: string) => void {
  return (err, message = String(err)) => {
    const error = err instanceof Error ? err : undefined;
    const cause = (error as { originalError?: unknown } | undefined)?.originalError;
    const clientError = error !== undefined && (cause instanceof AppError || (error.name === 'GraphQLError' && cause === undefined));
    const outage = error !== undefined && isDatabaseUnavailable(cause ?? error);
    (clientError ? log.debug.bind(log) : outage ? log.warn.bind(log) : log.error.bind(log))({ err }, message);
  };
}
