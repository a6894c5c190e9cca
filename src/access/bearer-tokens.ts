import { errors, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../log.js';
import { claimsReader, type ClaimPaths } from './token-claims.js';
import type { Principal } from './principal.js';
import { createProviderKeys, ProviderUnavailableError } from './provider-keys.js';

// Bearer tokens from an OpenID provider: JWT access tokens (RFC 9068) checked with `jose` against the provider's
// published keys, as src/access/provider-keys.ts holds them (read through discovery, again when too old or when a
// token names a key they lack, never more than once per cooldown, the last good keys kept while the provider fails).
// A token is accepted only when signed with an allowed asymmetric algorithm by one of those keys, issued by
// OIDC_ISSUER for OIDC_AUDIENCE, of type OIDC_TOKEN_TYPE, and within exp/nbf give or take the clock tolerance.

export interface TokenSettings {
  issuer: string;
  audience: string;
  algorithms: readonly string[];
  clockToleranceSeconds: number;
  /** The `typ` header a token must carry; null: any. */
  tokenType: string | null;
  jwksCacheMs: number;
  jwksCooldownMs: number;
  /** How long past jwksCacheMs the last good keys serve while the provider's keys cannot be read. */
  jwksStaleMs: number;
  /** How long a verified token is remembered (never past its expiry); 0: verified on every request. */
  cacheMs: number;
  claims: ClaimPaths;
}

/** A token's caller, or why the token is refused (RFC 6750 error_description). */
export type TokenVerdict = { principal: Principal } | { problem: string };

export interface TokenVerifier {
  /** Throws ProviderUnavailableError when the provider's keys cannot be read (an outage: 503, not 401). */
  verify(token: string): Promise<TokenVerdict>;
  /** Reads the provider's keys ahead of the first token; logs on failure, and the first token tries again. */
  warmUp(): Promise<void>;
}

const FETCH_TIMEOUT_MS = 5000;

export function createTokenVerifier(settings: TokenSettings, log: Logger): TokenVerifier {
  const readClaims = claimsReader(settings.claims);
  const toleranceMs = settings.clockToleranceSeconds * 1000;
  const verified = new LRUCache<string, Principal>({ max: 10_000 });
  const keys = createProviderKeys({ issuer: settings.issuer, cacheMs: settings.jwksCacheMs, cooldownMs: settings.jwksCooldownMs, staleMs: settings.jwksStaleMs, fetchTimeoutMs: FETCH_TIMEOUT_MS }, log);

  async function verifyNow(token: string): Promise<TokenVerdict> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, keys.getKey, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: [...settings.algorithms],
        clockTolerance: settings.clockToleranceSeconds,
        requiredClaims: ['exp', 'sub'],
        ...(settings.tokenType !== null && { typ: settings.tokenType }),
      }));
    } catch (error) {
      if (error instanceof ProviderUnavailableError) throw error;
      return { problem: problemOf(error, settings) };
    }
    return readClaims(payload, (payload.exp as number) * 1000 + toleranceMs);
  }

  return {
    async verify(token) {
      const known = verified.get(token);
      if (known && known.expiresAt !== null && known.expiresAt > Date.now()) return { principal: known };
      const verdict = await verifyNow(token);
      if ('principal' in verdict && settings.cacheMs > 0) {
        const ttl = Math.min(settings.cacheMs, (verdict.principal.expiresAt ?? 0) - Date.now());
        if (ttl > 0) verified.set(token, verdict.principal, { ttl });
      }
      return verdict;
    },
    warmUp: () => keys.warmUp(),
  };
}

/** Why jose refused a token, as a client may read it (the keys' own failures are ProviderUnavailableError, not this). */
function problemOf(error: unknown, settings: TokenSettings): string {
  if (error instanceof errors.JWTExpired) return 'the token expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        return 'the token is not valid yet (nbf)';
      case 'iss':
        return `the token was not issued by ${settings.issuer}`;
      case 'aud':
        return `the token is not meant for this gateway (its audience is not ${settings.audience})`;
      case 'typ':
        return `the token is not an access token (its typ is not ${settings.tokenType})`;
      default:
        return error.reason === 'missing' ? `the token lacks the claim ${error.claim}` : `the token's claim ${error.claim} is not valid`;
    }
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return `the token's signature algorithm is not allowed (allowed: ${settings.algorithms.join(', ')})`;
  if (error instanceof errors.JWKSNoMatchingKey) return "the token's signing key is not one of the provider's keys";
  if (error instanceof errors.JWKSMultipleMatchingKeys) return "the token's signing key is ambiguous (name it with kid)";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature is not valid";
  // jose parses before it asks for a key: what is left is a token it could not read.
  return 'the token is malformed';
}
