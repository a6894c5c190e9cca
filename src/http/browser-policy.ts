import { isLoopbackHostHeader } from './loopback.js';

// What a web page may make the gateway do. A browser attaches an Origin to cross-origin requests and can send
// "simple" requests (text/plain, form-encoded or multipart bodies; GET) without asking first, and DNS rebinding can
// point a hostile name at 127.0.0.1. So: no cross-origin access unless CORS_ORIGINS names the origin; write doors
// take JSON only; and with AUTH=off (which is loopback-only) the Host must be a loopback name (src/http/loopback.ts).

/** `https://app.example` style origins: scheme, host and port only. Throws naming a bad one. */
export function parseOrigins(list: string): string[] {
  return list
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((origin) => {
      let parsed: URL;
      try {
        parsed = new URL(origin);
      } catch {
        throw new Error(`"${origin}" is not an origin (scheme://host[:port])`);
      }
      if (parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) throw new Error(`"${origin}" is not an origin (scheme://host[:port], no path or slash)`);
      return origin;
    });
}

export interface BrowserPolicy {
  /** Origins allowed cross-origin access (CORS_ORIGINS). */
  corsOrigins: readonly string[];
  /** AUTH=off: only loopback Host values are served. */
  loopbackHostOnly: boolean;
}

/** Why a request is refused before anything else looks at it, or null. */
export function browserRefusal(policy: BrowserPolicy, headers: { host?: string | null; origin?: string | null }): { status: number; code: string; message: string } | null {
  if (policy.loopbackHostOnly && !isLoopbackHostHeader(headers.host)) {
    return {
      status: 421,
      code: 'MISDIRECTED_REQUEST',
      message: 'With AUTH=off this gateway answers only requests addressed to a loopback name (localhost, 127.0.0.1, [::1]).',
    };
  }
  const origin = headers.origin;
  if (origin && !isAllowedOrigin(policy, origin, headers.host)) {
    return { status: 403, code: 'FORBIDDEN_ORIGIN', message: `Requests from the origin ${origin.slice(0, 100)} are not allowed; the operator may add it to CORS_ORIGINS.` };
  }
  return null;
}

/** Same-origin (the page was served by this gateway) or named in CORS_ORIGINS. */
export function isAllowedOrigin(policy: BrowserPolicy, origin: string, host: string | null | undefined): boolean {
  if (policy.corsOrigins.includes(origin)) return true;
  try {
    return host !== null && host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** JSON bodies only: application/json or any application/*+json, with parameters. */
export function isJsonContentType(contentType: string | null | undefined): boolean {
  return typeof contentType === 'string' && /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType.trim());
}
