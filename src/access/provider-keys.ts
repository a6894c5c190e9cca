import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../log.js';
import { isLoopbackHost } from '../http/loopback.js';
import { ServiceUnavailableError } from '../errors.js';

// The OpenID provider's signing keys, as the gateway holds them: found through the discovery document of OIDC_ISSUER,
// read again when they are older than OIDC_JWKS_CACHE_MS or a token names a key they lack (the provider rotated).
// The provider is never flooded, whatever tokens arrive and whatever the provider answers:
// - one read at a time (every token that needs the keys waits for the read in progress);
// - at most one read per OIDC_JWKS_COOLDOWN_MS, failed reads included (jose's remote key set floors successful reads
//   only, so a failing provider was read once per token);
// - a key id that a fresh read did not hold is remembered as unknown for the cooldown: tokens naming it are refused
//   without asking;
// - while reads fail, the last good keys go on serving tokens signed by them for OIDC_JWKS_STALE_MS past their age
//   limit (stale-if-error, as Microsoft.IdentityModel's last-known-good configuration does), then tokens are answered
//   503 until a read succeeds. A 503's Retry-After is the time to the gateway's own next read, so a client that obeys
//   it is not refused again for the same reason.

export interface ProviderKeySettings {
  issuer: string;
  /** OIDC_JWKS_CACHE_MS: keys older than this are read again before they are used. */
  cacheMs: number;
  /** OIDC_JWKS_COOLDOWN_MS: the least time between two reads, whatever their outcome. */
  cooldownMs: number;
  /** OIDC_JWKS_STALE_MS: how long past cacheMs the last good keys serve while the provider cannot be read. */
  staleMs: number;
  /** One request's time limit (discovery document, key set). */
  fetchTimeoutMs: number;
}

export interface ProviderKeys {
  /** jose's key look-up: the key a token's header names. Throws ProviderUnavailableError when it cannot be known now. */
  getKey: JWTVerifyGetKey;
  /** Reads the keys ahead of the first token; a failure here does not hold the first token back by a cooldown. */
  warmUp(): Promise<void>;
}

/** The provider cannot be asked for its keys: the caller is not at fault, and should retry after `retryAfterSeconds`. */
export class ProviderUnavailableError extends ServiceUnavailableError {
  constructor(detail: string, retryAfterSeconds: number) {
    super(`The bearer token cannot be checked now: ${detail}. Retry shortly.`, retryAfterSeconds);
  }
}

type LocalKeys = ReturnType<typeof createLocalJWKSet>;

export function createProviderKeys(settings: ProviderKeySettings, log: Logger): ProviderKeys {
  let jwksUri: URL | undefined;
  let held: { keys: LocalKeys; readAt: number } | undefined;
  let lastReadAt = -Infinity;
  let lastFailure: string | null = null;
  let reading: Promise<void> | undefined;
  const unknownKids = settings.cooldownMs > 0 ? new LRUCache<string, true>({ max: 10_000, ttl: settings.cooldownMs }) : undefined;

  const mayRead = () => performance.now() - lastReadAt >= settings.cooldownMs;
  const age = () => (held ? performance.now() - held.readAt : Infinity);
  /** Whether the held keys may still be used: within their age limit, or past it while reads fail (stale-if-error). */
  const usable = () => held !== undefined && (age() <= settings.cacheMs || (lastFailure !== null && age() <= settings.cacheMs + settings.staleMs));
  const retryAfterSeconds = () => Math.max(1, Math.ceil((lastReadAt + settings.cooldownMs - performance.now()) / 1000));
  const unavailable = () =>
    new ProviderUnavailableError(lastFailure === null ? 'the OpenID provider could not be reached' : `the OpenID provider's keys could not be read`, retryAfterSeconds());

  async function getJson(url: URL | string, what: string): Promise<unknown> {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(settings.fetchTimeoutMs), redirect: 'error', headers: { accept: 'application/json' } });
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
      return await response.json();
    } catch (error) {
      throw new Error(`${what} ${url} cannot be read (${(error as Error).message})`, { cause: error });
    }
  }

  async function discover(): Promise<URL> {
    const url = `${settings.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const document = (await getJson(url, 'the discovery document')) as { issuer?: unknown; jwks_uri?: unknown } | null;
    // OpenID Connect Discovery 1.0, 4.3: the document must name exactly the issuer it was asked for.
    if (document?.issuer !== settings.issuer) throw new Error(`the discovery document names the issuer ${JSON.stringify(document?.issuer)}, not OIDC_ISSUER ${settings.issuer}`);
    if (typeof document.jwks_uri !== 'string') throw new Error('the discovery document names no jwks_uri');
    const uri = new URL(document.jwks_uri);
    if (uri.protocol !== 'https:' && !(uri.protocol === 'http:' && isLoopbackHost(uri.hostname))) throw new Error(`the jwks_uri ${uri} is not https://`);
    return uri;
  }

  /** One read of the keys (the discovery document first, until it has been read once); never throws. */
  function read(): Promise<void> {
    reading ??= (async () => {
      lastReadAt = performance.now();
      try {
        jwksUri ??= await discover();
        const keys = createLocalJWKSet((await getJson(jwksUri, 'the key set')) as JSONWebKeySet);
        held = { keys, readAt: performance.now() };
        unknownKids?.clear();
        if (lastFailure !== null) log.info({ issuer: settings.issuer }, "the OpenID provider's keys are read again");
        lastFailure = null;
      } catch (error) {
        lastFailure = (error as Error).message;
        const serving = usable() ? 'the keys read before serve tokens until they are too old' : 'bearer tokens are answered 503 until they can';
        log.warn({ err: error, issuer: settings.issuer, nextReadInMs: settings.cooldownMs }, `the OpenID provider's keys cannot be read; ${serving}`);
      }
    })().finally(() => (reading = undefined));
    return reading;
  }

  /** The keys to check a token with now, read first when they are missing or too old (and a read is allowed). */
  async function current(): Promise<LocalKeys> {
    if (reading) await reading;
    // Keys too old are read again once per OIDC_JWKS_CACHE_MS while reads succeed, once per cooldown while they fail.
    if (held ? age() > settings.cacheMs && (lastFailure === null || mayRead()) : mayRead()) await read();
    if (!usable()) throw unavailable();
    return held!.keys;
  }

  return {
    async getKey(header, token) {
      const keys = await current();
      try {
        return await keys(header, token);
      } catch (error) {
        if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
        const kid = header.kid;
        // A key the provider may have added since the last read: read again, once per cooldown, never for a kid that a
        // read within the cooldown did not hold.
        if ((kid !== undefined && unknownKids?.has(kid)) || !mayRead()) throw error;
        await read();
        if (lastFailure !== null) throw unavailable();
        try {
          return await held!.keys(header, token);
        } catch (again) {
          if (again instanceof errors.JWKSNoMatchingKey && kid !== undefined) unknownKids?.set(kid, true);
          throw again;
        }
      }
    },
    async warmUp() {
      await read();
      // A start-up that kept the event loop busy past the fetch's time limit is no reason to refuse the first tokens
      // for a whole cooldown: the floor counts from reads that tokens asked for.
      if (lastFailure !== null) lastReadAt = -Infinity;
    },
  };
}
