import type { FieldIssue } from '../../errors.js';

// JSON-RPC 2.0 envelopes and error codes: the standard ones, and the application codes this gateway documents
// (docs/api.md "JSON-RPC errors"). JSON-RPC answers are HTTP 200, except a body over the size limit (413), a single
// call refused for its key or rate (401, 403, 429) and a database outage (503, -32050; see legacy-door.ts).

export const RPC_ERROR = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  NOT_FOUND: -32004,
  CONFLICT: -32009,
  UNAUTHENTICATED: -32001,
  FORBIDDEN: -32003,
  RATE_LIMITED: -32029,
  PAYLOAD_TOO_LARGE: -32013,
  /** Server error (the -32000..-32099 range): the database cannot be reached; retry after `data.retryAfterSeconds`. */
  SERVICE_UNAVAILABLE: -32050,
} as const;

/** GraphQL `extensions.code` -> JSON-RPC code; one table for every area. */
export const RPC_CODE_BY_GRAPHQL_CODE: Record<string, number> = {
  BAD_USER_INPUT: RPC_ERROR.INVALID_PARAMS,
  NOT_FOUND: RPC_ERROR.NOT_FOUND,
  CONFLICT: RPC_ERROR.CONFLICT,
  UNAUTHENTICATED: RPC_ERROR.UNAUTHENTICATED,
  FORBIDDEN: RPC_ERROR.FORBIDDEN,
  RATE_LIMITED: RPC_ERROR.RATE_LIMITED,
  PAYLOAD_TOO_LARGE: RPC_ERROR.PAYLOAD_TOO_LARGE,
  SERVICE_UNAVAILABLE: RPC_ERROR.SERVICE_UNAVAILABLE,
};

export type RpcId = string | number | null;

export interface RpcError {
  code: number;
  message: string;
  data?: { fields?: FieldIssue[]; [key: string]: unknown };
}

export type RpcResponse =
  | { jsonrpc: '2.0'; id: RpcId; result: unknown; rowsCount?: number }
  | { jsonrpc: '2.0'; id: RpcId; error: RpcError };

export interface RpcCall {
  id: RpcId;
  /** False for a JSON-RPC notification (no `id` member): it gets no answer. */
  expectsAnswer: boolean;
  method: string;
  params: unknown;
  /** The spec's pause requests carry their parameters under `result`. */
  legacyResult: unknown;
}

export class RpcFailure extends Error {
  constructor(
    readonly rpc: RpcError,
    readonly id: RpcId = null,
  ) {
    super(rpc.message);
  }
}

export function rpcError(id: RpcId, error: RpcError): RpcResponse {
  return { jsonrpc: '2.0', id, error };
}

/** Validates one request object of the envelope (spec 2.1); throws RpcFailure -32600 naming what is wrong. */
export function parseCall(value: unknown): RpcCall {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RpcFailure({ code: RPC_ERROR.INVALID_REQUEST, message: 'Invalid Request: the body must be a JSON-RPC request object' });
  }
  const body = value as Record<string, unknown>;
  const rawId = body.id;
  const idOk = rawId === undefined || rawId === null || typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId));
  const id: RpcId = idOk && rawId !== undefined ? (rawId as RpcId) : null;
  const fields: FieldIssue[] = [];
  if (!idOk) fields.push({ field: 'id', message: 'must be a string, a number or null' });
  if (body.jsonrpc !== undefined && body.jsonrpc !== '2.0') fields.push({ field: 'jsonrpc', message: 'must be "2.0"' });
  if (typeof body.method !== 'string' || body.method === '') fields.push({ field: 'method', message: 'is required and must be a non-empty string' });
  if (fields.length) {
    throw new RpcFailure({ code: RPC_ERROR.INVALID_REQUEST, message: `Invalid Request: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, data: { fields } }, id);
  }
  return { id, expectsAnswer: 'id' in body, method: body.method as string, params: body.params, legacyResult: body.result };
}
