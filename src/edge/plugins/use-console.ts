import type { Plugin } from 'graphql-yoga';
import { CONSOLE_ASSET_PREFIX, CONSOLE_PATH, loadConsoleAssets, type ConsoleAssets } from '../console/assets.js';
import { assetResponse } from '../static-assets.js';

// The operator console (console/, built into console/dist/): its page at /console and its assets under
// /console/assets/, all from the gateway (no outside network). Placed beside useGraphiQL, after the browser rules,
// so the Host and Origin checks guard it like every other door; no key is needed to load it (it holds no data: it
// asks the operator for a key and runs every read and action as a GraphQL operation with it).

/**
 * Nothing outside the gateway, and nothing inline: the browser refuses any script, style, image, font or
 * connection from elsewhere. 'self' covers the graphql-ws socket of the same host.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  // The page is small and names the current asset versions: always ask again. The same for every caller.
  'cache-control': 'public, no-cache',
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function useConsole(): Plugin {
  let loading: Promise<ConsoleAssets | null> | undefined;
  const load = () =>
    (loading ??= loadConsoleAssets().then(
      (assets) => {
        // Not built yet: look again next time, so a build made while the gateway runs is picked up.
        if (!assets) loading = undefined;
        return assets;
      },
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  return {
    async onRequest({ request, url, endResponse }) {
      const { pathname } = url;
      const isPage = pathname === CONSOLE_PATH || pathname === `${CONSOLE_PATH}/`;
      if (!isPage && !pathname.startsWith(CONSOLE_ASSET_PREFIX)) return;
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      const assets = await load();
      if (!assets) {
        if (isPage) endResponse(new Response('The console is not built: run `npm run build` (or node scripts/build-console.mjs).\n', { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' } }));
        return;
      }
      if (isPage) {
        endResponse(new Response(request.method === 'HEAD' ? null : assets.page, { status: 200, headers: PAGE_HEADERS }));
        return;
      }
      const found = assets.byPath.get(pathname);
      if (found) endResponse(await assetResponse(request, found));
    },
  };
}
