// What a bearer token may be, in one place: the signature algorithms the gateway accepts (config.ts checks
// OIDC_ALGORITHMS against them) and how a claim path names a claim (token-claims.ts reads it).

/**
 * Every asymmetric JWS algorithm: the provider signs with its private key, the gateway checks with the public key it
 * publishes. `none` (no signature) and HS256/384/512 (a shared secret) are never accepted: with a symmetric algorithm
 * the public key itself, which anyone can read, would serve as the secret and sign anything.
 */
export const ASYMMETRIC_ALGORITHMS: ReadonlySet<string> = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']);

/** The default allow-list: the algorithms providers sign access tokens with. */
export const DEFAULT_TOKEN_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'] as const;

/**
 * The path of a claim: a claim name as it is (`scope`, `https://gateway.example/scopes`), or a JSON Pointer (RFC 6901)
 * when it starts with `/` (`/https:~1~1gateway.example~1claims/scopes`: the member `scopes` of a namespace object).
 */
export function claimPath(path: string): string[] {
  if (!path.startsWith('/')) return [path];
  return path
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The value at `path` in the claims; undefined when any step of it is missing. */
export function claimAt(claims: Record<string, unknown>, path: readonly string[]): unknown {
  let value: unknown = claims;
  for (const segment of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}
