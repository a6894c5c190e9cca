import { ADMIN_SCOPE } from './access-rules.js';
import { ForbiddenError } from '../errors.js';
import type { GrantedScopes } from '../identity/scopes.js';

/** Who is calling: the API key, or the OpenID provider's bearer token, that authenticated the request. */
export interface Principal {
  /** How the caller proved who it is. */
  kind: 'key' | 'token';
  /** What the rate limit counts by: the key's id, or `token:<sub>` for a token. */
  id: string;
  /** The key's name, or the token's subject (its client, for a client credentials token). */
  name: string;
  scopes: readonly string[];
  /** Set when the caller is bound to one system: it may send and read only that system's notifications. */
  systemId: string | null;
  /**
   * The personal-data scopes the caller may see at most (a token's consented ones): X-IdpScopes can narrow them,
   * never widen them. null: no ceiling (an API key; X-IdpScopes alone decides).
   */
  idpConsent: GrantedScopes;
  /** The oid of the person a token is bound to (OIDC_PERSON_CLAIM); null for keys and unbound tokens. */
  personOid: string | null;
  /** When a token stops being valid (ms since the epoch; its `exp` plus the clock tolerance); null for keys. */
  expiresAt: number | null;
}


/** What a context must carry for the checks below (GraphQLContext does). */
export interface AccessContext {
  principal?: Principal | null;
  config: { AUTH: 'on' | 'off' };
}

export function hasScope(principal: Principal, scope: string): boolean {
  return principal.scopes.includes(ADMIN_SCOPE) || principal.scopes.includes(scope);
}

/**
 * For areas that own per-system data (notifications): throws ForbiddenError when the caller's key is bound to
 * another system. Keys with no system binding, `admin:all` keys and AUTH=off requests without a key pass.
 */
export function assertSystemAccess(ctx: AccessContext, systemId: string): void {
  const principal = ctx.principal;
  if (!principal) {
    if (ctx.config.AUTH === 'off') return;
    throw new ForbiddenError('this operation needs an API key');
  }
  if (principal.systemId === null || principal.scopes.includes(ADMIN_SCOPE)) return;
  if (principal.systemId !== systemId) {
    throw new ForbiddenError(`this ${principal.kind === 'key' ? 'API key' : 'token'} is bound to system "${principal.systemId}" and may not act for system "${systemId}"`);
  }
}

/** The systemId a bound key must use, for filters: lists of a bound key are narrowed to its own system. */
export function boundSystemId(ctx: AccessContext): string | null {
  const principal = ctx.principal;
  if (!principal || principal.scopes.includes(ADMIN_SCOPE)) return null;
  return principal.systemId;
}

/** An API key is told apart from a bearer token by its form (`gw_...`). */
export function isApiKeyForm(credential: string): boolean {
  return credential.startsWith('gw_');
}

/** The credential a request presents: `Authorization: Bearer <key or token>` or `X-Api-Key: <key>`. */
export function presentedKey(get: (name: string) => string | null | undefined): string | null {
  const auth = get('authorization');
  if (auth) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return match ? match[1]! : auth.trim();
  }
  const apiKey = get('x-api-key');
  return apiKey ? apiKey.trim() : null;
}
