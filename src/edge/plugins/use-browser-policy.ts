import type { Plugin } from 'graphql-yoga';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { browserRefusal, type BrowserPolicy } from '../../http/browser-policy.js';

// The browser rules (src/http/browser-policy.ts) on every HTTP door, before anything else reads the request: a
// loopback Host with AUTH=off, and no foreign Origin unless CORS_ORIGINS names it. GraphQL POSTs with a body type a
// page may send without a preflight (text/plain, form-encoded, multipart) need Yoga's CSRF header
// (x-graphql-yoga-csrf). GraphQL over GET runs queries only (Yoga refuses mutations there), so it needs no header.

export function useBrowserPolicy(policy: BrowserPolicy): Plugin {
  const csrf = useCSRFPrevention();
  return {
    onRequest({ request, endResponse }) {
      const refused = browserRefusal(policy, {
        host: request.headers.get('host'),
        // A preflight asks before anything runs; the CORS answer (or its absence) decides it.
        origin: request.method === 'OPTIONS' ? null : request.headers.get('origin'),
      });
      if (!refused) return;
      endResponse(
        new Response(JSON.stringify({ errors: [{ message: refused.message, extensions: { code: refused.code } }] }), {
          status: refused.status,
          headers: { 'content-type': 'application/json; charset=utf-8' },
        }),
      );
    },
    onRequestParse(payload) {
      if (payload.request.method === 'GET' || payload.request.method === 'HEAD') return;
      return csrf.onRequestParse?.(payload);
    },
  };
}

/** Headers a page on an allowed origin may send and read. */
const CORS_ALLOWED_HEADERS = ['content-type', 'accept', 'authorization', 'x-api-key', 'x-idpscopes', 'x-request-id', 'idempotency-key', 'if-none-match', 'x-graphql-yoga-csrf'];
const CORS_EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'etag', 'www-authenticate', 'location'];

/** Yoga's `cors` option: cross-origin access only for CORS_ORIGINS, each answered with its own origin (never `*` or `null`). */
export function corsFor(policy: BrowserPolicy): false | ((request: Request) => false | { origin: string[]; credentials: true; allowedHeaders: string[]; exposedHeaders: string[]; methods: string[]; maxAge: number }) {
  if (policy.corsOrigins.length === 0) return false;
  return (request) => {
    const origin = request.headers.get('origin');
    if (!origin || !policy.corsOrigins.includes(origin)) return false;
    return { origin: [origin], credentials: true, allowedHeaders: CORS_ALLOWED_HEADERS, exposedHeaders: CORS_EXPOSED_HEADERS, methods: ['GET', 'POST', 'PUT'], maxAge: 600 };
  };
}
