import type { Plugin } from 'graphql-yoga';
import { cacheHeaders } from '../../http/cache-policy.js';

// The cache rule (src/http/cache-policy.ts) on every HTTP door: Yoga's answers (/graphql, SSE, GraphiQL, health,
// metrics, the legacy paths Yoga carries) in onResponse; the node:http door's answers carry `nodeAnswerHeaders`.

export function useCachePolicy(options: { corsOrigins: readonly string[] }): Plugin & { nodeAnswerHeaders: Readonly<Record<string, string>> } {
  const corsConfigured = options.corsOrigins.length > 0;
  // The legacy door's answers are never public and name no Vary beyond the caller's headers (getPersonById's
  // X-IdpScopes), so on the node:http door the rule's headers replace theirs.
  const legacy = cacheHeaders({ cacheControl: null, vary: null }, corsConfigured);
  const legacyHeaders = { 'cache-control': legacy.cacheControl, vary: legacy.vary };
  return {
    nodeAnswerHeaders: legacyHeaders,
    onResponse({ response }) {
      const { cacheControl, vary } = cacheHeaders({ cacheControl: response.headers.get('cache-control'), vary: response.headers.get('vary') }, corsConfigured);
      // delete, then set: whatwg-node's Headers made from an object keep its own spelling ('Cache-Control', as Yoga's
      // SSE answer writes it) beside a set() one, and the answer would carry both.
      response.headers.delete('cache-control');
      response.headers.set('cache-control', cacheControl);
      if (vary) {
        response.headers.delete('vary');
        response.headers.set('vary', vary);
      }
    },
  };
}
