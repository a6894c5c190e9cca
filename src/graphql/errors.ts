import { createGraphQLError, maskError as yogaMaskError } from 'graphql-yoga';
import type { GraphQLError } from 'graphql';
import { AppError, ServiceUnavailableError } from '../errors.js';
import { unavailableError, unstorableInputError } from '../db/errors.js';

/**
 * AppErrors reach clients with their code (and fields); a database outage becomes SERVICE_UNAVAILABLE with HTTP 503
 * and Retry-After (its driver text, host and port are logged, never shown); anything else is masked by Yoga and logged.
 */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  // Duck-typed: graphql may be loaded twice (ESM and CommonJS builds), so `instanceof GraphQLError` is unreliable.
  const wrapped = (error as Partial<GraphQLError> | null)?.originalError !== undefined ? (error as GraphQLError) : undefined;
  const raw = wrapped ? wrapped.originalError : error;
  const original = raw instanceof AppError ? raw : (unavailableError(raw) ?? unstorableInputError(raw) ?? raw);
  if (original instanceof AppError) {
    const http = original instanceof ServiceUnavailableError ? { http: { status: 503, headers: { 'Retry-After': String(original.retryAfterSeconds) } } } : {};
    return createGraphQLError(original.message, {
      ...(wrapped?.nodes && { nodes: wrapped.nodes }),
      ...(wrapped?.source && wrapped.positions && { source: wrapped.source, positions: wrapped.positions }),
      ...(wrapped?.path && { path: wrapped.path }),
      extensions: { code: original.code, ...original.details, ...http },
    });
  }
  return yogaMaskError(error, message, isDev);
}
