import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import { ServiceUnavailableError } from '../errors.js';
import type { Logger } from '../log.js';
import { isLoopbackHost } from '../config.js';
import { claimsReader, type ClaimPaths } from './token-claims.js';
import type { Principal } from './principal.js';

// Bearer tokens from an OpenID provider: JWT access tokens (RFC 9068) checked with `jose` against the provider's
// published keys. The keys are found through the discovery document of OIDC_ISSUER, kept OIDC_JWKS_CACHE_MS, and read
// again at once when a token names a key the gateway does not hold (the provider rotated its keys), but not more
// often than OIDC_JWKS_COOLDOWN_MS, so a flood of made-up key ids cannot make the gateway flood the provider.
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
  /** How long a verified token is remembered (never past its expiry); 0: verified on every request. */
  cacheMs: number;
  claims: ClaimPaths;
}

/** A token's caller, or why the token is refused (RFC 6750 error_description). */
export type TokenVerdict = { principal: Principal } | { problem: string };

export interface TokenVerifier {
  /** Throws ProviderUnavailableError when the provider's keys cannot be read (an outage: 503, not 401). */
  verify(token: string): Promise<TokenVerdict>;
  /** Reads the discovery document ahead of the first token; logs on failure, and the first token tries again. */
  warmUp(): Promise<void>;
}

/** The provider cannot be asked for its keys: the caller is not at fault, and should retry. */
export class ProviderUnavailableError extends ServiceUnavailableError {
  constructor(detail: string) {
    super(`The bearer token cannot be checked now: ${detail}. Retry shortly.`);
  }
}

const FETCH_TIMEOUT_MS = 5000;

export function createTokenVerifier(settings: TokenSettings, log: Logger): TokenVerifier {
  const readClaims = claimsReader(settings.claims);
  const toleranceMs = settings.clockToleranceSeconds * 1000;
  const verified = new LRUCache<string, Principal>({ max: 10_000 });
  // The key set, once the discovery document named it. A failed discovery is tried again, at most once per cooldown.
  let keys: JWTVerifyGetKey | undefined;
  let discovering: Promise<JWTVerifyGetKey> | undefined;
  let failedAt = -Infinity;
  let lastFailure = '';

  async function discover(): Promise<JWTVerifyGetKey> {
    const url = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error', headers: { accept: 'application/json' } });
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
      document = (await response.json()) as typeof document;
    } catch (error) {
      throw new Error(`the discovery document ${url} cannot be read (${(error as Error).message})`, { cause: error });
    }
    // OpenID Connect Discovery 1.0, 4.3: the document must name exactly the issuer it was asked for.
    if (document.issuer !== settings.issuer) throw new Error(`the discovery document names the issuer ${JSON.stringify(document.issuer)}, not OIDC_ISSUER ${settings.issuer}`);
    if (typeof document.jwks_uri !== 'string') throw new Error('the discovery document names no jwks_uri');
    const jwksUri = new URL(document.jwks_uri);
    if (jwksUri.protocol !== 'https:' && !(jwksUri.protocol === 'http:' && isLoopbackHost(jwksUri.hostname))) throw new Error(`the jwks_uri ${jwksUri} is not https://`);
    return createRemoteJWKSet(jwksUri, { cacheMaxAge: settings.jwksCacheMs, cooldownDuration: settings.jwksCooldownMs, timeoutDuration: FETCH_TIMEOUT_MS });
  }

  async function keySet(): Promise<JWTVerifyGetKey> {
    if (keys) return keys;
    if (performance.now() - failedAt < settings.jwksCooldownMs) throw new ProviderUnavailableError(`the OpenID provider could not be reached (${lastFailure})`);
    discovering ??= discover()
      .then((found) => (keys = found))
      .catch((error: unknown) => {
        failedAt = performance.now();
        lastFailure = (error as Error).message;
        log.error({ err: error, issuer: settings.issuer }, 'the OpenID provider cannot be discovered; bearer tokens are answered 503 until it can');
        throw new ProviderUnavailableError('the OpenID provider could not be reached');
      })
      .finally(() => (discovering = undefined));
    return discovering;
  }

  async function verifyNow(token: string): Promise<TokenVerdict> {
    const getKey = await keySet();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: [...settings.algorithms],
        clockTolerance: settings.clockToleranceSeconds,
        requiredClaims: ['exp', 'sub'],
        ...(settings.tokenType !== null && { typ: settings.tokenType }),
      }));
    } catch (error) {
      const problem = problemOf(error, settings);
      if (problem === null) {
        log.warn({ err: error, issuer: settings.issuer }, "the OpenID provider's keys cannot be read");
        throw new ProviderUnavailableError("the OpenID provider's keys could not be read");
      }
      return { problem };
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
    async warmUp() {
      try {
        await keySet();
      } catch {
        // Logged by keySet. A start-up that kept the event loop busy past the fetch's timeout is no reason to refuse
        // the first tokens for a whole cooldown: the floor counts from failures that tokens met.
        failedAt = -Infinity;
      }
    },
  };
}

/** Why jose refused a token, as a client may read it; null for what is not the token's fault (the keys could not be read). */
function problemOf(error: unknown, settings: TokenSettings): string | null {
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
  if (error instanceof errors.JWKSTimeout) return null;
  if (error instanceof errors.JOSEError && /JSON Web Key Set/.test(error.message)) return null;
  if (error instanceof errors.JOSEError) return 'the token is malformed';
  if (error instanceof TypeError && /fetch/i.test(error.message)) return null;
  // jose parses before it fetches anything: what is left is a token it could not read.
  return 'the token is malformed';
}
