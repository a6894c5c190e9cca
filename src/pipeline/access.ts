import type { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import { ADMIN_SCOPE } from '../access/access-rules.js';
import type { Principal } from '../access/principal.js';
import { insufficientScope } from '../access/bearer-challenge.js';
import { CALLER_REQUIRED, QUERY_TOKEN_PARAMETER, type Unauthenticated } from '../access/caller.js';
import { mayRun, scopeOf, servesOwnRecords } from '../access/field-scopes.js';
import type { GatewayMetrics } from '../kit/metrics.js';
import { callerHeaderMessage } from '../http/caller-headers.js';
import { operationShape, refusal } from './operation.js';
import type { OperationGuard } from './guards.js';
import type { CallerRefusal } from './request-context.js';

// One check for every area: each root field declares `extensions.scope` (`<area>:<verb>`); an operation runs
// only when the caller (API key or bearer token) holds the scope of every root field it selects. GraphQL over HTTP,
// SSE, graphql-ws (whose caller is settled at connection time, src/edge/ws.ts) and every legacy path (which becomes a
// GraphQL request carrying the same Authorization / X-Api-Key headers) all pass here.
//
// A root field that also declares `ownRecords: true` (the identity reads) may be run without its scope by a caller
// bound to a person (a token with OIDC_PERSON_CLAIM): its resolver then serves that person's own records only
// (src/access/own-records.ts).

/** Whether the request's URL carries a token (RFC 6750 2.3), which is refused rather than read. */
export function urlCarriesToken(url: string): boolean {
  const query = url.indexOf('?');
  if (query === -1 || !url.includes(QUERY_TOKEN_PARAMETER, query)) return false;
  const hash = url.indexOf('#', query);
  return new URLSearchParams(url.slice(query + 1, hash === -1 ? undefined : hash)).has(QUERY_TOKEN_PARAMETER);
}

/** The refusal of a request without a valid caller under AUTH=on: one error for every door (401 and its challenge over HTTP). */
export function unauthenticatedRefusal(why: Unauthenticated | null | undefined, withHttpStatus: boolean): GraphQLError {
  const reason = why ?? CALLER_REQUIRED;
  return refusal(reason.message, 'UNAUTHENTICATED', withHttpStatus, {}, withHttpStatus ? { 'WWW-Authenticate': reason.challenge } : undefined);
}

/** Null when the operation may run; else the error that refuses it. */
export function checkAccess(
  auth: 'on' | 'off',
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  principal: Principal | null | undefined,
  unauthenticated: Unauthenticated | null | undefined,
  withHttpStatus: boolean,
) {
  if (auth === 'off') return null;
  const shape = operationShape(schema, document, operationName);
  if (!shape) return null; // graphql-js itself reports the missing or ambiguous operation
  // Nothing is allocated on the way to a yes: every keyed operation passes here.
  let missing: Set<string> | undefined;
  for (const f of shape.rootFields) {
    if (f.name === '__typename') continue;
    if (!principal) return unauthenticatedRefusal(unauthenticated, withHttpStatus);
    if (f.name === '__schema' || f.name === '__type') continue; // introspection: any valid caller
    if (mayRun(principal, f.field)) continue;
    const scope = scopeOf(f.field);
    if (scope !== undefined && principal.personOid !== null && servesOwnRecords(f.field)) continue;
    (missing ??= new Set<string>()).add(scope ?? ADMIN_SCOPE);
  }
  if (!missing || !principal) return null;
  const needed = [...missing].sort();
  const names = shape.rootFields
    .filter((f) => f.name !== '__typename')
    .map((f) => f.name)
    .join(', ');
  const who = principal.kind === 'key' ? 'This API key' : 'This token';
  return refusal(`${who} lacks the scope ${needed.join(', ')} needed by ${names}.`, 'FORBIDDEN', withHttpStatus, { requiredScopes: needed }, withHttpStatus ? { 'WWW-Authenticate': insufficientScope(needed) } : undefined);
}

/** The error a caller refused before anything else is read gets, on every door that answers GraphQL. */
export function callerRefusalError(refused: CallerRefusal, withHttpStatus: boolean): GraphQLError {
  if (refused.kind === 'unauthenticated') return unauthenticatedRefusal(refused.why, withHttpStatus);
  return refusal(callerHeaderMessage(refused.issue), 'BAD_REQUEST', withHttpStatus, { fields: [refused.issue] });
}

type GuardContext = { principal?: Principal | null; unauthenticated?: Unauthenticated | null; httpStatus?: boolean };

/** The guard that refuses an operation whose root fields need a scope the caller lacks (or a caller, under AUTH=on). */
export function accessGuard(options: { auth: 'on' | 'off'; metrics?: GatewayMetrics | undefined }): OperationGuard {
  return ({ schema, document, operationName, contextValue }) => {
    const ctx = contextValue as GuardContext;
    const error = checkAccess(options.auth, schema, document, operationName, ctx.principal, ctx.unauthenticated, ctx.httpStatus === true);
    if (!error) return null;
    options.metrics?.rejected.inc({ reason: String(error.extensions.code).toLowerCase() });
    return { errors: [error] };
  };
}
