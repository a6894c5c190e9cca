import { createGraphQLError, maskError as yogaMaskError } from 'graphql-yoga';
import type { GraphQLError } from 'graphql';
import { AppError } from '../errors.js';

/** AppErrors reach clients with their code (and fields); anything else is masked by Yoga and logged. */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  // Duck-typed: graphql may be loaded twice (ESM and CommonJS builds), so `instanceof GraphQLError` is unreliable.
  const wrapped = (error as Partial<GraphQLError> | null)?.originalError !== undefined ? (error as GraphQLError) : undefined;
  const original = wrapped ? wrapped.originalError : error;
  if (original instanceof AppError) {
    return createGraphQLError(original.message, {
      ...(wrapped?.nodes && { nodes: wrapped.nodes }),
      ...(wrapped?.path && { path: wrapped.path }),
      extensions: { code: original.code, ...original.details },
    });
  }
  return yogaMaskError(error, message, isDev);
}
