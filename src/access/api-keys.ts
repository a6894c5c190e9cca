import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { readPage, type Page, type Window } from '../pagination.js';
import { KEY_PATTERN, type CreateApiKeyInput } from './access-rules.js';
import type { Principal } from './principal.js';

// API keys: random, shown once, stored as a SHA-256 hash. A key is 256 random bits, so a fast hash is enough:
// slow hashes (bcrypt, scrypt) defend guessable passwords, and would cost every request their delay.

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  systemId: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

const PUBLIC_FIELDS = { id: true, name: true, prefix: true, scopes: true, systemId: true, createdAt: true, revokedAt: true } as const;

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function assertKnownScopes(scopes: readonly string[], knownScopes: ReadonlySet<string>): void {
  const unknown = scopes.map((s, i) => ({ s, i })).filter(({ s }) => !knownScopes.has(s));
  if (unknown.length) {
    throw new ValidationError(unknown.map(({ s, i }) => ({ field: `scopes.${i}`, message: `"${s}" is not a scope of this gateway; known: ${[...knownScopes].sort().join(', ')}` })));
  }
}

/** Creates a key; `knownScopes` (when given) refuses scopes no field declares, so a typo never goes unnoticed. */
export async function createApiKey(db: PrismaClient, input: CreateApiKeyInput, knownScopes?: ReadonlySet<string>): Promise<{ key: string; apiKey: ApiKey }> {
  if (knownScopes) assertKnownScopes(input.scopes, knownScopes);
  const prefix = randomBytes(6).toString('hex');
  const key = `gw_${prefix}_${randomBytes(32).toString('base64url')}`;
  const apiKey = await db.apiKey.create({
    data: { name: input.name, prefix, hash: hashKey(key), scopes: [...new Set(input.scopes)], systemId: input.systemId ?? null },
    select: PUBLIC_FIELDS,
  });
  return { key, apiKey };
}

export async function listApiKeys(db: PrismaClient, window: Window): Promise<Page<ApiKey>> {
  return readPage(
    window,
    (skip, take) => db.apiKey.findMany({ select: PUBLIC_FIELDS, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], skip, take }),
    () => db.apiKey.count(),
  );
}

/** Revokes by id or by prefix; revoking twice keeps the first revocation time. */
export async function revokeApiKey(db: PrismaClient, idOrPrefix: string): Promise<ApiKey> {
  const where = /^[0-9a-f]{12}$/.test(idOrPrefix) ? { prefix: idOrPrefix } : { id: idOrPrefix };
  const found = await db.apiKey.findFirst({ where, select: PUBLIC_FIELDS });
  if (!found) throw new NotFoundError(`no API key "${idOrPrefix}"`);
  if (found.revokedAt) return found;
  return db.apiKey.update({ where: { id: found.id }, data: { revokedAt: new Date() }, select: PUBLIC_FIELDS });
}

/** Of `ids`, the keys that still work (not revoked, not deleted): what open sockets and streams are held to. */
export async function liveKeyIds(db: PrismaClient, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db.apiKey.findMany({ where: { id: { in: [...ids] }, revokedAt: null }, select: { id: true } });
  return new Set(rows.map((row) => row.id));
}

/** The principal of a presented key, or null when it is malformed, unknown or revoked. */
export async function verifyApiKey(db: PrismaClient, presented: string): Promise<Principal | null> {
  const match = KEY_PATTERN.exec(presented);
  if (!match) return null;
  const row = await db.apiKey.findUnique({ where: { prefix: match[1]! } });
  if (!row || row.revokedAt) return null;
  const expected = Buffer.from(row.hash, 'hex');
  const actual = Buffer.from(hashKey(presented), 'hex');
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  return { kind: 'key', id: row.id, name: row.name, scopes: row.scopes, systemId: row.systemId, idpConsent: null, personOid: null, expiresAt: null };
}

/**
 * verifyApiKey with a short in-memory memory of answers (AUTH_CACHE_MS); `forget()` after a revocation. A remembered
 * answer comes back synchronously: every keyed request asks, and a promise per request is its price.
 */
export function createKeyVerifier(db: PrismaClient, cacheMs: number) {
  const cache = new Map<string, { principal: Principal | null; until: number }>();
  const lookUp = async (presented: string): Promise<Principal | null> => {
    const principal = await verifyApiKey(db, presented);
    if (cacheMs > 0) {
      if (cache.size > 10_000) cache.clear();
      cache.set(presented, { principal, until: Date.now() + cacheMs });
    }
    return principal;
  };
  return {
    verify(presented: string): Principal | null | Promise<Principal | null> {
      const hit = cache.get(presented);
      return hit && hit.until > Date.now() ? hit.principal : lookUp(presented);
    },
    forget(): void {
      cache.clear();
    },
  };
}

export type KeyVerifier = ReturnType<typeof createKeyVerifier>;
