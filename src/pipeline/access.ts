import type { DocumentNode, GraphQLSchema } from 'graphql';
import { ADMIN_SCOPE } from '../access/access-rules.js';
import { hasScope, presentedKey, type Principal } from '../access/principal.js';
import type { KeyVerifier } from '../access/api-keys.js';
import type { GraphQLContext } from '../schema/context.js';
import type { GatewayMetrics } from '../runtime/metrics.js';
import { carriesHttpStatus, operationShape, refusal } from './operation.js';
import type { OperationGuard } from './guards.js';
import { originalRequest } from '../edge/plugins/remade-request.js';

// One check for every area: each root field declares `extensions.scope` (`<area>:<verb>`); an operation runs
// only when the caller's key holds the scope of every root field it selects. GraphQL over HTTP, SSE,
// graphql-ws (whose key is checked at connection time, see src/app.ts) and every legacy path (which becomes
// a GraphQL request carrying the same Authorization / X-Api-Key headers) all pass here.

export interface AccessControlOptions {
  auth: 'on' | 'off';
  keys: KeyVerifier;
  metrics?: GatewayMetrics;
}

type Ctx = Partial<GraphQLContext> & { request?: Request; principal?: Principal | null; presentedKey?: boolean };

/** The scope a root field declares; undefined when it declares none (then only admin:all may run it). */
export function scopeOf(field: { extensions?: { scope?: unknown } | null } | undefined): string | undefined {
  const scope = field?.extensions?.scope;
  return typeof scope === 'string' ? scope : undefined;
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

export function unauthenticatedMessage(keySent: boolean): string {
  return keySent
    ? 'The API key is unknown, malformed or revoked.'
    : 'An API key is required: send "Authorization: Bearer <key>" or "X-Api-Key: <key>".';
}

/** Null when the operation may run; else the error that refuses it. */
export function checkAccess(
  auth: 'on' | 'off',
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  principal: Principal | null | undefined,
  keySent: boolean,
  withHttpStatus: boolean,
) {
  if (auth === 'off') return null;
  const shape = operationShape(schema, document, operationName);
  if (!shape) return null; // graphql-js itself reports the missing or ambiguous operation
  const fields = shape.rootFields.filter((f) => f.name !== '__typename');
  if (fields.length === 0) return null;
  if (!principal) {
    return refusal(unauthenticatedMessage(keySent), 'UNAUTHENTICATED', withHttpStatus ? 401 : undefined, {}, withHttpStatus ? { 'WWW-Authenticate': 'Bearer' } : undefined);
  }
  const missing = new Set<string>();
  for (const f of fields) {
    if (f.name === '__schema' || f.name === '__type') continue; // introspection: any valid key
    const scope = scopeOf(f.field);
    if (scope === undefined ? !principal.scopes.includes(ADMIN_SCOPE) : !hasScope(principal, scope)) missing.add(scope ?? ADMIN_SCOPE);
  }
  if (missing.size === 0) return null;
  const needed = [...missing].sort();
  const names = fields.map((f) => f.name).join(', ');
  return refusal(`This API key lacks the scope ${needed.join(', ')} needed by ${names}.`, 'FORBIDDEN', withHttpStatus ? 403 : undefined, { requiredScopes: needed });
}

/** The caller's part of an operation's context: who calls (principal), whether a key was sent, and X-IdpScopes. */
export type CallerContext = Pick<GraphQLContext, 'principal' | 'idpScopes'> & { presentedKey: boolean };

/**
 * The caller of a request (`callerOf`, once per request), the 401 an HTTP request without a valid key gets before
 * anything else reads it (`keyFirst`), and the guard that refuses an operation whose root fields need a scope the
 * caller's key lacks. The pipeline (src/pipeline/pipeline.ts) asks the caller; every HTTP edge asks keyFirstAnswer.
 */
export function accessControl(options: AccessControlOptions): {
  callerOf(request: Request): Promise<CallerContext>;
  /**
   * With AUTH=on, the GraphQL endpoint's 401 before anything else reads the request (its body size, its type, the
   * CSRF rule, its document); over SSE, in a 200 stream. Null: the request goes on. An outage is answered later,
   * where the caller is asked again (503).
   */
  keyFirstAnswer(request: Request, Response: typeof globalThis.Response): Promise<Response | null>;
  /**
   * With AUTH=on, the refusal message for a request that carries no valid key (null when it does): the legacy paths
   * ask it first, so a caller without a key learns nothing about parameters (401 before 400). The same look-up as
   * `callerOf`: a key is verified once per request.
   */
  keyRefusal: ((request: Request) => Promise<string | null>) | undefined;
  guard: OperationGuard;
} {
  const seen = new WeakMap<Request, Promise<CallerContext>>();
  // Keyed by the request as first seen: a plugin that read the body hands the rest a remade one (remade-request.ts).
  const callerOf = (given: Request) => {
    const request = originalRequest(given);
    let found = seen.get(request);
    if (!found) {
      const key = presentedKey((name) => request.headers.get(name));
      found = (key ? options.keys.verify(key) : Promise.resolve(null)).then((principal) => ({
        principal,
        presentedKey: key !== null,
        idpScopes: request.headers.get('x-idpscopes'),
      }));
      seen.set(request, found);
    }
    return found;
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
    const body = JSON.stringify({ errors: [{ message: unauthenticatedMessage(caller.presentedKey), extensions: { code: 'UNAUTHENTICATED' } }] });
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
      status: 401,
      headers: {
        'content-type': graphqlResponse !== -1 && (plainJson === -1 || graphqlResponse < plainJson) ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8',
        'www-authenticate': 'Bearer',
      },
    });
  };
  return {
    callerOf,
    keyFirstAnswer,
    keyRefusal:
      options.auth === 'off'
        ? undefined
        : async (request) => {
            const caller = await callerOf(request);
            return caller.principal ? null : unauthenticatedMessage(caller.presentedKey);
          },
    guard: ({ schema, document, operationName, contextValue }) => {
      const ctx = contextValue as Ctx;
      const error = checkAccess(options.auth, schema, document, operationName, ctx.principal, ctx.presentedKey === true, carriesHttpStatus(ctx.request));
      if (!error) return null;
      options.metrics?.rejected.inc({ reason: String(error.extensions.code).toLowerCase() });
      return { errors: [error] };
    },
  };
}
