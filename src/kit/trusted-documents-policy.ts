// TRUSTED_DOCUMENTS read as configuration (src/config.ts): which kinds of caller may run only the documents a
// manifest lists (src/pipeline/trusted-documents.ts holds the manifests and asks the policy).

/**
 * How a caller proved who it is: an API key (`gw_…`), a bearer token from an OpenID provider, or nothing (possible
 * only with AUTH=off). Rules that differ by the kind of caller (trusted documents) read it, never the header's form.
 */
export const CALLER_KINDS = ['key', 'token', 'anonymous'] as const;
export type CallerKind = (typeof CALLER_KINDS)[number];

/** The kinds of caller that may run listed documents only (TRUSTED_DOCUMENTS). */
export type TrustedDocumentsPolicy = ReadonlySet<CallerKind>;

/**
 * TRUSTED_DOCUMENTS: `token` (the default: callers with an OpenID token run listed documents only), `all`, `off`, or a
 * comma-separated list of caller kinds (`token,anonymous`).
 */
export function parseTrustedDocumentsPolicy(value: string): TrustedDocumentsPolicy {
  const words = value
    .split(',')
    .map((w) => w.trim().toLowerCase())
    .filter(Boolean);
  if (words.length === 1 && words[0] === 'off') return new Set();
  if (words.length === 1 && words[0] === 'all') return new Set(CALLER_KINDS);
  const kinds = new Set<CallerKind>();
  for (const word of words) {
    if (!(CALLER_KINDS as readonly string[]).includes(word)) {
      throw new Error(`"${word}" is not a kind of caller; use off, all, or a comma-separated list of ${CALLER_KINDS.join(', ')}`);
    }
    kinds.add(word as CallerKind);
  }
  if (kinds.size === 0) throw new Error(`must be off, all, or a comma-separated list of ${CALLER_KINDS.join(', ')}`);
  return kinds;
}

/** TRUSTED_DOCUMENTS_MANIFESTS: comma-separated file paths. */
export function parseManifestPaths(value: string): readonly string[] {
  return value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}
