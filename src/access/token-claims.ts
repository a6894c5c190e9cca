import { SCOPES, type Scope } from '../identity/scopes.js';
import { claimAt, claimPath } from '../kit/token-rules.js';
import type { Principal } from './principal.js';

// A verified token's claims become the caller (docs/security.md, "Bearer tokens"): its gateway scopes, the personal-data
// scopes the person consented to, a notification system binding and a person binding, each read at a claim path the
// operator names. A claim that is present but of the wrong shape refuses the token (the provider is misconfigured,
// and guessing would widen or narrow access silently); a missing one grants nothing.

export interface ClaimPaths {
  scopes: string;
  idpScopes: string;
  system?: string | undefined;
  person?: string | undefined;
}

/** The claims that make a caller: a Principal, or why the token cannot be one. */
export type ClaimsVerdict = { principal: Principal } | { problem: string };

const PERSONAL_SCOPES: ReadonlySet<string> = new Set(SCOPES);
const OID = /^\d{1,20}$/;

/** Reads claim paths once (config), and maps a token's claims with them. */
export function claimsReader(paths: ClaimPaths): (claims: Record<string, unknown>, expiresAt: number) => ClaimsVerdict {
  const scopesAt = claimPath(paths.scopes);
  const idpAt = claimPath(paths.idpScopes);
  const systemAt = paths.system ? claimPath(paths.system) : undefined;
  const personAt = paths.person ? claimPath(paths.person) : undefined;

  /** A space-separated string (OAuth's `scope`) or an array of strings; undefined when malformed. */
  const words = (value: unknown): string[] | undefined => {
    if (value === undefined) return [];
    if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.filter(Boolean);
    return undefined;
  };

  return (claims, expiresAt) => {
    const sub = claims.sub;
    if (typeof sub !== 'string' || sub === '') return { problem: 'the token names no subject (sub)' };
    const scopes = words(claimAt(claims, scopesAt));
    if (!scopes) return { problem: `the claim ${paths.scopes} is neither a space-separated string nor an array of strings` };
    const idp = words(claimAt(claims, idpAt));
    if (!idp) return { problem: `the claim ${paths.idpScopes} is neither a space-separated string nor an array of strings` };
    let systemId: string | null = null;
    if (systemAt) {
      const value = claimAt(claims, systemAt);
      if (value !== undefined && (typeof value !== 'string' || value === '')) return { problem: `the claim ${paths.system} is not a system id (a string)` };
      systemId = value ?? null;
    }
    let personOid: string | null = null;
    if (personAt) {
      const value = claimAt(claims, personAt);
      const oid = typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? String(value) : value;
      if (oid !== undefined && (typeof oid !== 'string' || !OID.test(oid))) return { problem: `the claim ${paths.person} is not a person's oid (1 to 20 digits)` };
      personOid = oid ?? null;
    }
    return {
      principal: {
        kind: 'token',
        id: `token:${sub}`,
        name: sub,
        scopes: [...new Set(scopes)],
        systemId,
        // Only the words that name personal-data scopes: the same claim often holds `openid`, `profile` and gateway scopes too.
        idpConsent: new Set(idp.filter((w): w is Scope => PERSONAL_SCOPES.has(w))),
        personOid,
        expiresAt,
      },
    };
  };
}
