import type { Plugin } from 'graphql-yoga';
import { CONSOLE_ASSET_PREFIX, CONSOLE_PATH, loadConsoleAssets } from '../console/assets.js';
import type { ConsoleProvider } from '../console/sign-in.js';
import { assetResponse, loadedOnce } from '../static-assets.js';

// The operator console (console/, built into console/dist/): its page at /console, its assets under
// /console/assets/ and its settings at /console/settings.json, all from the gateway (no outside network but the
// OpenID provider it may sign in at). Placed beside useGraphiQL, after the browser rules, so the Host and Origin
// checks guard it like every other door; no key is needed to load it (it holds no data: it asks the operator for a
// key or a sign-in and runs every read and action as a GraphQL operation, by its id in the console's manifest).

/**
 * Nothing outside the gateway, and nothing inline: the browser refuses any script, style, image, font or
 * connection from elsewhere. 'self' covers the graphql-ws socket of the same host; `connect` adds the OpenID
 * provider's origin when the console signs in there (its discovery document and token endpoint).
 */
export function consoleCsp(connect: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    ["connect-src 'self'", ...connect].join(' '),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy of a console that signs in with API keys only. */
export const CONSOLE_CSP = consoleCsp();

/** What the console reads at start: where it may sign in besides the API key (null: keys only). */
export const CONSOLE_SETTINGS_PATH = `${CONSOLE_PATH}/settings.json`;

export interface ConsoleOptions {
  /**
   * The console's manifest the gateway read at start-up and trusts (null: there was none). A console built after
   * that is not served: its operations would be refused by id until a restart reads its manifest.
   */
  trustedManifest: string | null;
  provider: ConsoleProvider | null;
}

const STALE_BUILD =
  "The console was built after the gateway started, so the gateway does not know its operations yet: restart the gateway.\n";

export function useConsole(options: ConsoleOptions): Plugin {
  const pageHeaders = {
    'content-type': 'text/html; charset=utf-8',
    // The page is small and names the current asset versions: always ask again. The same for every caller.
    'cache-control': 'public, no-cache',
    'content-security-policy': consoleCsp(options.provider ? [new URL(options.provider.issuer).origin] : []),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  };
  const settings = JSON.stringify({ provider: options.provider });
  const settingsHeaders = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, no-cache', 'x-content-type-options': 'nosniff' };
  const plainText = (text: string) => new Response(text, { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } });
  // Not built yet: look again next time, so a build made while the gateway runs is found (and asks for a restart).
  const load = loadedOnce(loadConsoleAssets, (assets) => assets !== null);
  return {
    async onRequest({ request, url, endResponse }) {
      const { pathname } = url;
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (pathname === CONSOLE_SETTINGS_PATH) {
        endResponse(new Response(request.method === 'HEAD' ? null : settings, { status: 200, headers: settingsHeaders }));
        return;
      }
      const isPage = pathname === CONSOLE_PATH || pathname === `${CONSOLE_PATH}/`;
      if (!isPage && !pathname.startsWith(CONSOLE_ASSET_PREFIX)) return;
      const assets = await load();
      if (!assets) {
        if (isPage) endResponse(plainText('The console is not built: run `npm run build` (or node scripts/build-console.mjs), then restart the gateway.\n'));
        return;
      }
      if (isPage) {
        if (assets.manifest !== options.trustedManifest) endResponse(plainText(STALE_BUILD));
        else endResponse(new Response(request.method === 'HEAD' ? null : assets.page, { status: 200, headers: pageHeaders }));
        return;
      }
      const found = assets.byPath.get(pathname);
      if (found) endResponse(await assetResponse(request, found));
    },
  };
}
