import { print, type DocumentNode, type ExecutionResult, type GraphQLFormattedError } from 'graphql';
import type { FieldIssue } from '../../errors.js';
import { RPC_CODE_BY_GRAPHQL_CODE, RPC_ERROR, type RpcError } from './jsonrpc.js';
import type { RpcRoute } from './route.js';
import type { RequestContext } from '../../pipeline/request-context.js';

// Legacy calls run as GraphQL operations of the same schema as /graphql, on the same pipeline (src/pipeline/): the
// same guards (access, rate and query limits), error masking and metrics, with the caller's request as context.

/** Executes one operation for `origin` (the pipeline's runRoute). */
export type GraphQLRunner = (origin: RequestContext, document: DocumentNode, query: string, variables: Record<string, unknown>, operationName?: string) => Promise<ExecutionResult>;

const printed = new WeakMap<object, string>();

export async function executeRoute(
  run: GraphQLRunner,
  origin: RequestContext,
  route: Pick<RpcRoute, 'document'>,
  variables: unknown,
): Promise<{ data: unknown } | { error: RpcError }> {
  let query = printed.get(route.document);
  if (query === undefined) {
    query = print(route.document);
    printed.set(route.document, query);
  }
  const result = await run(origin, route.document, query, (variables ?? {}) as Record<string, unknown>);
  if (result.errors?.length) return { error: toRpcError(result.errors) };
  return { data: result.data };
}

/** Maps GraphQL errors onto one JSON-RPC error, keeping every named field of every error. */
export function toRpcError(errors: readonly GraphQLFormattedError[]): RpcError {
  const first = errors[0]!;
  const code = typeof first.extensions?.code === 'string' ? first.extensions.code : undefined;
  const fields: FieldIssue[] = errors.flatMap((e) => (Array.isArray(e.extensions?.fields) ? (e.extensions.fields as FieldIssue[]) : []));
  const rpcCode = (code !== undefined ? RPC_CODE_BY_GRAPHQL_CODE[code] : undefined) ?? (code === 'GRAPHQL_VALIDATION_FAILED' ? RPC_ERROR.INVALID_PARAMS : RPC_ERROR.INTERNAL_ERROR);
  const data: RpcError['data'] = { ...(code && { code }), ...(fields.length && { fields }) };
  for (const key of ['retryAfterSeconds', 'requiredScopes'] as const) if (first.extensions?.[key] !== undefined) data[key] = first.extensions[key];
  return { code: rpcCode, message: errors.map((e) => e.message).join('; '), data };
}
