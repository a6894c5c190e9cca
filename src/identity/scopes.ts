import { ForbiddenError, ValidationError } from '../errors.js';
import { viewETag, type PersonView } from './identity.js';

// X-IdpScopes, in one place: which scope releases which person fields (ESIA scope names), parsing of the header,
// and the one filter both GraphQL and REST answers pass through.

/** Fields of the person record every caller sees, whatever scopes it holds. */
export const BASE_FIELDS = [
  'stateFacts',
  'trusted',
  'rfgUOperatorCheck',
  'updatedOn',
  'status',
  'verifying',
  'containsUpCfmCode',
  'eTag',
  'etag',
  'links',
] as const satisfies readonly (keyof PersonView)[];

/** Scope -> person fields it releases. `usr_org` releases no person field: it opens the organization lists. */
export const SCOPE_FIELDS = {
  openid: [],
  fullname: ['firstName', 'lastName', 'middleName'],
  birthdate: ['birthDate'],
  gender: ['gender'],
  birthplace: ['birthPlace'],
  citizenship: ['citizenship'],
  snils: ['snils'],
  inn: ['inn'],
  id_doc: ['rIdDoc', 'ridDoc'],
  usr_org: [],
} as const satisfies Record<string, readonly (keyof PersonView)[]>;

export type Scope = keyof typeof SCOPE_FIELDS;
export const SCOPES = Object.keys(SCOPE_FIELDS) as Scope[];

/** The scope that opens a person's organizations, groups and employments. */
export const ORGANIZATIONS_SCOPE: Scope = 'usr_org';

/** Granted scopes; `null` means the caller sent no X-IdpScopes header and is not restricted. */
export type GrantedScopes = ReadonlySet<Scope> | null;

const isScope = (name: string): name is Scope => Object.hasOwn(SCOPE_FIELDS, name);

/** Words of the header that are not scopes; empty when the header is good. */
export function unknownScopes(header: string): string[] {
  return splitScopes(header).filter((s) => !isScope(s));
}

function splitScopes(header: string): string[] {
  return header.split(/[\s,]+/).filter(Boolean);
}

/** Parses X-IdpScopes (space- or comma-separated). Absent header: no restriction. Unknown scope: ValidationError. */
export function parseScopes(header: string | null | undefined, field = 'X-IdpScopes'): GrantedScopes {
  if (header === null || header === undefined) return null;
  const unknown = unknownScopes(header);
  if (unknown.length) {
    throw new ValidationError([{ field, message: `unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; known: ${SCOPES.join(', ')}` }]);
  }
  return new Set(splitScopes(header) as Scope[]);
}

/**
 * What a request may see: the X-IdpScopes it sent, within the caller's consent (a token's consented scopes; null for
 * an API key, which has no ceiling). The header narrows the consent, never widens it; without the header the consent
 * itself applies.
 */
export function withinConsent(requested: GrantedScopes, consent: GrantedScopes): GrantedScopes {
  if (consent === null) return requested;
  if (requested === null) return consent;
  return new Set([...requested].filter((scope) => consent.has(scope)));
}

/** The person fields the scopes release. */
export function releasedFields(scopes: GrantedScopes): ReadonlySet<keyof PersonView> {
  const fields = new Set<keyof PersonView>(BASE_FIELDS);
  for (const scope of scopes ?? SCOPES) for (const f of SCOPE_FIELDS[scope]) fields.add(f);
  return fields;
}

/**
 * The person record with every field outside the granted scopes removed, and its eTag made from what is left (RFC 9110
 * 8.8.3: a validator of the selected representation): a withheld field, changed or guessed, never shows in it.
 */
export function filterPerson(person: PersonView, scopes: GrantedScopes): Partial<PersonView> {
  if (scopes === null) return person;
  const released = releasedFields(scopes);
  const view = Object.fromEntries(Object.entries(person).filter(([k]) => released.has(k as keyof PersonView))) as Partial<PersonView>;
  view.eTag = view.etag = viewETag(view);
  return view;
}

/** Throws FORBIDDEN unless the scopes hold `scope`. */
export function requireScope(scopes: GrantedScopes, scope: Scope, what: string): void {
  if (scopes !== null && !scopes.has(scope)) throw new ForbiddenError(`${what} needs the scope "${scope}" in X-IdpScopes (and, for a token, among its consented scopes)`);
}
