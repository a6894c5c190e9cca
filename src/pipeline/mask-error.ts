import { createGraphQLError } from '@graphql-tools/utils';
import { GraphQLError } from 'graphql';
import { AppError, ServiceUnavailableError } from '../errors.js';
import { unavailableError, unstorableInputError } from '../db/errors.js';

/** Whether `error` is a GraphQL error made as one (not one wrapping some other thrown value), which clients may see. */
function isOriginalGraphQLError(error: unknown): boolean {
  if (!(error instanceof GraphQLError)) return false;
  return error.originalError == null || isOriginalGraphQLError(error.originalError);
}

/**
 * AppErrors reach clients with their code (and fields); a database outage becomes SERVICE_UNAVAILABLE with HTTP 503
 * and Retry-After (its driver text, host and port are logged, never shown); a GraphQL error made as one is shown as
 * it is; anything else becomes `message` (INTERNAL_SERVER_ERROR), keeping its place in the document, as Yoga masks.
 */
export function maskError(error: unknown, message: string): Error {
  // Duck-typed: graphql may be loaded twice (ESM and CommonJS builds), so `instanceof GraphQLError` is unreliable.
  const wrapped = (error as Partial<GraphQLError> | null)?.originalError !== undefined ? (error as GraphQLError) : undefined;
  const raw = wrapped ? wrapped.originalError : error;
  const original = raw instanceof AppError ? raw : (unavailableError(raw) ?? unstorableInputError(raw) ?? raw);
  if (original instanceof AppError) {
    const http = original instanceof ServiceUnavailableError ? { http: { status: original.httpStatus, headers: { 'Retry-After': String(original.retryAfterSeconds) } } } : {};
    return createGraphQLError(original.message, {
      ...(wrapped?.nodes && { nodes: wrapped.nodes }),
      ...(wrapped?.source && wrapped.positions && { source: wrapped.source, positions: wrapped.positions }),
      ...(wrapped?.path && { path: wrapped.path }),
      extensions: { code: original.code, ...original.details, ...http },
    });
  }
  if (isOriginalGraphQLError(error)) return error as GraphQLError;
  const graphqlError = error instanceof GraphQLError ? error : undefined;
  const http = graphqlError?.extensions?.http;
  return createGraphQLError(message, {
    ...(graphqlError?.nodes && { nodes: graphqlError.nodes }),
    ...(graphqlError?.source && graphqlError.positions && { source: graphqlError.source, positions: graphqlError.positions }),
    ...(graphqlError?.path && { path: graphqlError.path }),
    extensions: { code: 'INTERNAL_SERVER_ERROR', unexpected: true, ...(http !== undefined && { http }) },
  });
}
