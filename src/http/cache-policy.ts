// What shared and private caches may keep. Every API answer depends on its caller (the key decides 401/403 and, with
// a bound key, which rows; X-IdpScopes decides which personal fields), so it is `Cache-Control: no-store` and its
// Vary names the caller's headers. An answer that marks itself `public` in its own Cache-Control is a public
// resource the same for everyone (GraphiQL's page and assets, /openapi.json) and keeps its own. With CORS_ORIGINS
// set, the CORS headers of any answer differ by Origin, so every answer varies by Origin too.

/** The request headers that change what an API answer holds: the key (Authorization or X-Api-Key) and X-IdpScopes. */
export const CALLER_HEADERS = ['Authorization', 'X-Api-Key', 'X-IdpScopes'] as const;

export const NOT_STORED = 'no-store';

export interface CacheHeaders {
  cacheControl: string;
  /** Empty when the answer varies by nothing. */
  vary: string;
}

/** Whether an answer's own Cache-Control marks it as the same for every caller. */
export function isPublicAnswer(cacheControl: string | null): boolean {
  return cacheControl !== null && cacheControl.split(',').some((d) => d.trim().toLowerCase() === 'public');
}

/** The Cache-Control and Vary an answer leaves with, given the ones it was made with (null: none). */
export function cacheHeaders(own: { cacheControl: string | null; vary: string | null }, corsConfigured: boolean): CacheHeaders {
  const open = isPublicAnswer(own.cacheControl);
  return {
    cacheControl: open ? own.cacheControl! : NOT_STORED,
    vary: mergeVary(own.vary, [...(open ? [] : CALLER_HEADERS), ...(corsConfigured ? ['Origin'] : [])]),
  };
}

/** `names`, then the headers of `vary` not among them, each once (compared without case); `*` stays `*`. */
export function mergeVary(vary: string | null, names: readonly string[]): string {
  const own = (vary ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (own.includes('*')) return '*';
  // The rule's names first: the same answer then names its headers in the same order on every door.
  const merged: string[] = [];
  const seen = new Set<string>();
  for (const name of [...names, ...own]) {
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    merged.push(name);
  }
  return merged.join(', ');
}
