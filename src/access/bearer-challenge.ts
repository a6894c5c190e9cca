// The WWW-Authenticate value of a refusal, per RFC 6750 section 3: a request without credentials gets the bare
// `Bearer` challenge (no error code), one whose key or token is refused `error="invalid_token"` (or "invalid_request")
// with the reason, one whose caller lacks a scope (403) `error="insufficient_scope"` naming the scopes it needs.
// Every door builds the header here.

export interface ChallengeError {
  error: 'invalid_token' | 'invalid_request' | 'insufficient_scope';
  description?: string;
  /** The scopes needed (insufficient_scope). */
  scopes?: readonly string[];
}

/** A quoted-string of the characters RFC 6750 allows in error_description and scope (%x20-21 / %x23-5B / %x5D-7E). */
function quoted(text: string): string {
  return `"${text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?')}"`;
}

export function bearerChallenge(refusal?: ChallengeError): string {
  if (!refusal) return 'Bearer';
  const parts = [`error=${quoted(refusal.error)}`];
  if (refusal.description) parts.push(`error_description=${quoted(refusal.description)}`);
  if (refusal.scopes?.length) parts.push(`scope=${quoted(refusal.scopes.join(' '))}`);
  return `Bearer ${parts.join(', ')}`;
}

/** The 403 challenge of a caller lacking `scopes`. */
export function insufficientScope(scopes: readonly string[]): string {
  return bearerChallenge({ error: 'insufficient_scope', scopes });
}
