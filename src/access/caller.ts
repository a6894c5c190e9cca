import type { CallerKind } from '../kit/trusted-documents-policy.js';
import type { KeyVerifier } from './api-keys.js';
import type { TokenVerifier } from './bearer-tokens.js';
import { isApiKeyForm, presentedKey, type Principal } from './principal.js';
import { bearerChallenge } from './bearer-challenge.js';

// Who calls, whatever the door: the credential a request presents (`Authorization: Bearer <key or token>` or
// `X-Api-Key: <key>`) becomes a principal, or the reason it does not, as every door's 401 says it (RFC 6750). An API key
// is told apart by its `gw_` form and checked as it always was; anything else in `Authorization: Bearer` is a token
// of the OpenID provider (when OIDC_ISSUER is set). A token in the query string (`access_token`, RFC 6750 2.3) is
// never read: URLs end up in access logs, proxies and browser history, so such a request is refused whole.

/** Why a request has no caller: the message of its 401 and the WWW-Authenticate value that goes with it. */
export interface Unauthenticated {
  message: string;
  challenge: string;
}

export interface CallerIdentity {
  principal: Principal | null;
  /** The kind of the valid credential presented; 'anonymous' when none was (AUTH=off) or it was refused. */
  callerKind: CallerKind;
  /** Null when the caller is known; else why not (with AUTH=off such a request is still served, anonymously). */
  unauthenticated: Unauthenticated | null;
}

/** The refusal of a context that says nothing of its caller (it always does; a guard that cannot tell still refuses). */
export const CALLER_REQUIRED: Unauthenticated = { message: 'A caller is required.', challenge: 'Bearer' };

/** A header of the request (or of a graphql-ws connection_init payload), by lower-case name. */
export type HeaderLookup = (name: string) => string | null | undefined;

/** The query parameter RFC 6750 section 2.3 would carry a token in. */
export const QUERY_TOKEN_PARAMETER = 'access_token';

export interface CallerIdentifier {
  /**
   * `queryHasToken`: the request's URL carries `access_token` (refused, whatever else it presents). Synchronous when
   * the answer is at hand (no credential, a key verified a moment ago).
   */
  identify(header: HeaderLookup, queryHasToken: boolean): CallerIdentity | Promise<CallerIdentity>;
  /** Whether bearer tokens are accepted (OIDC_ISSUER set). */
  readonly acceptsTokens: boolean;
}

export function callerIdentifier(keys: KeyVerifier, tokens: TokenVerifier | null): CallerIdentifier {
  const required = tokens
    ? 'An API key or a bearer token is required: send "Authorization: Bearer <key or token>" or "X-Api-Key: <key>".'
    : 'An API key is required: send "Authorization: Bearer <key>" or "X-Api-Key: <key>".';
  const refused = (message: string, error: 'invalid_token' | 'invalid_request', description: string): CallerIdentity => ({
    principal: null,
    callerKind: 'anonymous',
    unauthenticated: { message, challenge: bearerChallenge({ error, description }) },
  });
  const unknownKey = 'The API key is unknown, malformed or revoked.';
  const keyIdentity = (principal: Principal | null): CallerIdentity =>
    principal ? { principal, callerKind: 'key', unauthenticated: null } : refused(unknownKey, 'invalid_token', unknownKey);
  return {
    acceptsTokens: tokens !== null,
    identify(header, queryHasToken) {
      if (queryHasToken) {
        const why = `a token in the query string (${QUERY_TOKEN_PARAMETER}) is not accepted; send it in the Authorization header`;
        return refused(`Refused: ${why}.`, 'invalid_request', why);
      }
      const credential = presentedKey(header);
      if (credential === null) return { principal: null, callerKind: 'anonymous', unauthenticated: { message: required, challenge: bearerChallenge() } };
      // Sent in X-Api-Key, or of the key form: an API key, whatever the provider says.
      if (!tokens || isApiKeyForm(credential) || !header('authorization')) {
        const principal = keys.verify(credential);
        return principal instanceof Promise ? principal.then(keyIdentity) : keyIdentity(principal);
      }
      return tokens.verify(credential).then((verdict) =>
        'principal' in verdict
          ? { principal: verdict.principal, callerKind: 'token', unauthenticated: null }
          : refused(`The bearer token is refused: ${verdict.problem}.`, 'invalid_token', verdict.problem),
      );
    },
  };
}
