import type { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import { ADMIN_SCOPE } from '../access/access-rules.js';
import { hasScope, type Principal } from '../access/principal.js';
import { insufficientScope } from '../access/bearer-challenge.js';
import { CALLER_REQUIRED, QUERY_TOKEN_PARAMETER, type CallerIdentifier, type CallerIdentity, type CallerKind, type Unauthenticated } from '../access/caller.js';
import type { GraphQLContext } from '../schema/context.js';
import type { GatewayMetrics } from '../runtime/metrics.js';
import { carriesHttpStatus, operationShape, refusal } from './operation.js';
import type { OperationGuard } from './guards.js';
import { originalRequest } from '../edge/plugins/remade-request.js';
import { objectSlot } from '../runtime/object-slot.js';

// One check for every area: each root field declares `extensions.scope` (`<area>:<verb>`); an operation runs
// only when the caller (API key or bearer token) holds the scope of every root field it selects. GraphQL over HTTP,
// SSE, graphql-ws (whose caller is settled at connection time, src/edge/ws.ts) and every legacy path (which becomes a
// GraphQL request carrying the same Authorization / X-Api-Key headers) all pass here.
//
// A root field that also declares `ownRecords: true` (the identity reads) may be run without its scope by a caller
// bound to a person (a token with OIDC_PERSON_CLAIM): its resolver then serves that person's own records only
// (src/identity/own-records.ts).

export interface AccessControlOptions {
  auth: 'on' | 'off';
  identifier: CallerIdentifier;
  metrics?: GatewayMetrics;
}

type Ctx = Partial<GraphQLContext> & { request?: Request; principal?: Principal | null; unauthenticated?: Unauthenticated | null };

/** The scope a root field declares; undefined when it declares none (then only admin:all may run it). */
export function scopeOf(field: { extensions?: { scope?: unknown } | null } | undefined): string | undefined {
  const scope = field?.extensions?.scope;
  return typeof scope === 'string' ? scope : undefined;
}

/** A root field any valid key may run, whatever its scopes (`extensions.anyKey`): what the caller itself may do. */
const opensToAnyKey = (field: { extensions?: { anyKey?: unknown } | null } | undefined) => field?.extensions?.anyKey === true;

/** Whether a key may run a root field: any key for an `anyKey` field, else its scope (admin:all when it declares none). */
export function mayRun(principal: Principal, field: { extensions?: { scope?: unknown; anyKey?: unknown } | null } | undefined): boolean {
  if (opensToAnyKey(field)) return true;
  const scope = scopeOf(field);
  return scope === undefined ? principal.scopes.includes(ADMIN_SCOPE) : hasScope(principal, scope);
}

/** Every scope some root field of the schema declares, plus admin:all and metrics:read. */
export function declaredScopes(schema: GraphQLSchema): Set<string> {
  const scopes = new Set<string>([ADMIN_SCOPE, 'metrics:read']);
  for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      const scope = scopeOf(field);
      if (scope) scopes.add(scope);
    }
  }
  return scopes;
}

/** Whether a field may be run, for their own records, by a caller bound to a person who lacks its scope. */
export function servesOwnRecords(field: { extensions?: { ownRecords?: unknown } | null } | undefined): boolean {
  return field?.extensions?.ownRecords === true;
}

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
  return refusal(reason.message, 'UNAUTHENTICATED', withHttpStatus ? 401 : undefined, {}, withHttpStatus ? { 'WWW-Authenticate': reason.challenge } : undefined);
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
  return refusal(`${who} lacks the scope ${needed.join(', ')} needed by ${names}.`, 'FORBIDDEN', withHttpStatus ? 403 : undefined, { requiredScopes: needed }, withHttpStatus ? { 'WWW-Authenticate': insufficientScope(needed) } : undefined);
}

/**
 * The caller's part of an operation's context: who calls (principal), the kind of its credential (`callerKind`: 'key',
 * 'token', or 'anonymous' when it has none), why it has none (`unauthenticated`: the 401's message and challenge), and
 * X-IdpScopes as sent.
 */
export type CallerContext = Pick<GraphQLContext, 'principal' | 'idpScopes'> & { callerKind: CallerKind; unauthenticated: Unauthenticated | null };

/** The kind of caller (trusted documents' policy reads it): key, token, or anonymous without a credential. */
export function callerKind(caller: CallerContext): CallerKind {
  return caller.callerKind;
}

/**
 * The caller of a request (`callerOf`, once per request), the 401 an HTTP request without a valid caller gets before
 * anything else reads it (`keyFirstAnswer`), and the guard that refuses an operation whose root fields need a scope the
 * caller lacks. The pipeline (src/pipeline/pipeline.ts) asks the caller; every HTTP edge asks keyFirstAnswer.
 */
export function accessControl(options: AccessControlOptions): {
  callerOf(request: Request): Promise<CallerContext>;
  /** With AUTH=on, why a request is refused before anything else is read (the legacy door's 401); null: it has a caller. */
  callerRefusal(request: Request): Promise<Unauthenticated | null>;
  /**
   * With AUTH=on, the GraphQL endpoint's 401 before anything else reads the request (its body size, its type, the
   * CSRF rule, its document); over SSE, in a 200 stream. Null: the request goes on. An outage is answered later,
   * where the caller is asked again (503).
   */
  keyFirstAnswer(request: Request, Response: typeof globalThis.Response): Promise<Response | null>;
  guard: OperationGuard;
} {
  const seen = objectSlot<Request, Promise<CallerContext>>('caller');
  // Keyed by the request as first seen: a plugin that read the body hands the rest a remade one (remade-request.ts).
  const callerOf = (given: Request) => {
    const request = originalRequest(given);
    let found = seen.get(request);
    if (!found) {
      const identity = options.identifier.identify((name) => request.headers.get(name), urlCarriesToken(request.url));
      const withScopes = (known: CallerIdentity): CallerContext => ({ ...known, idpScopes: request.headers.get('x-idpscopes') });
      found = identity instanceof Promise ? identity.then(withScopes) : Promise.resolve(withScopes(identity));
      seen.set(request, found);
    }
    return found;
  };
  const callerRefusal = async (request: Request): Promise<Unauthenticated | null> => {
    if (options.auth === 'off') return null;
    const caller = await callerOf(request);
    return caller.principal ? null : caller.unauthenticated;
  };
  const keyFirstAnswer = async (request: Request, Response: typeof globalThis.Response): Promise<Response | null> => {
    if (options.auth === 'off' || request.method === 'OPTIONS') return null;
    let caller: CallerContext;
    try {
      caller = await callerOf(request);
    } catch {
      return null; // an outage: answered (503) where the pipeline asks for the caller
    }
    if (caller.principal) return null;
    options.metrics?.rejected.inc({ reason: 'unauthenticated' });
    const error = unauthenticatedRefusal(caller.unauthenticated, true);
    const body = JSON.stringify({ errors: [{ message: error.message, extensions: { code: error.extensions.code } }] });
    // Over SSE the refusal travels in a 200 stream, as graphql-sse clients read it (docs/security.md).
    if (!carriesHttpStatus(request)) {
      return new Response(`:\n\nevent: next\ndata: ${body}\n\nevent: complete\ndata:\n\n`, {
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'content-encoding': 'none' },
      });
    }
    // The first of the two JSON types the client accepts, as Yoga chooses.
    const accept = request.headers.get('accept') ?? '';
    const graphqlResponse = accept.indexOf('application/graphql-response+json');
    const plainJson = accept.indexOf('application/json');
    return new Response(body, {
      status: (error.extensions.http as { status: number }).status,
      headers: {
        'content-type': graphqlResponse !== -1 && (plainJson === -1 || graphqlResponse < plainJson) ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8',
        ...(error.extensions.http as { headers: Record<string, string> }).headers,
      },
    });
  };
  return {
    callerOf,
    callerRefusal,
    keyFirstAnswer,
    guard: ({ schema, document, operationName, contextValue }) => {
      const ctx = contextValue as Ctx;
      const error = checkAccess(options.auth, schema, document, operationName, ctx.principal, ctx.unauthenticated, carriesHttpStatus(ctx.request));
      if (!error) return null;
      options.metrics?.rejected.inc({ reason: String(error.extensions.code).toLowerCase() });
      return { errors: [error] };
    },
  };
}
