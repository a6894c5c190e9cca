import type { Plugin } from 'graphql-yoga';
import { ASSET_PREFIX, loadGraphiQLAssets } from '../graphiql/assets.js';
import { assetResponse, loadedOnce } from '../static-assets.js';
import { EXAMPLE_TABS } from '../graphiql/example-tabs.js';
import { PAGE_CSP, renderGraphiQLPage } from '../graphiql/page.js';

// GraphiQL, served whole by the gateway (Yoga's own page loads it from a CDN): the page at the GraphQL endpoint for a
// browser's GET (Accept: text/html, as Yoga decides), its assets under /graphiql/. Placed after the browser rules, so
// the Host and Origin checks guard it like every other door; no API key is needed to load it (it holds no data; its
// operations carry the key typed into its Headers tab).

export interface GraphiQLOptions {
  endpoint: string;
  title: string;
  auth: 'on' | 'off';
}

/** The Headers tab GraphiQL opens with: where the key goes when the gateway asks for one. */
function startingHeaders(auth: 'on' | 'off'): string {
  return auth === 'on' ? JSON.stringify({ Authorization: 'Bearer <your API key>' }, null, 2) : '';
}

export function useGraphiQL(options: GraphiQLOptions): Plugin {
  const load = loadedOnce(async () => {
    const assets = await loadGraphiQLAssets();
    return { assets, page: renderGraphiQLPage(assets.urls, { endpoint: options.endpoint, title: options.title, tabs: EXAMPLE_TABS, headers: startingHeaders(options.auth) }) };
  });
  return {
    async onRequest({ request, url, endResponse }) {
      const { pathname } = url;
      if (pathname.startsWith(ASSET_PREFIX)) {
        if (request.method !== 'GET' && request.method !== 'HEAD') return;
        const found = (await load()).assets.byPath.get(pathname);
        if (found) endResponse(await assetResponse(request, found));
        return;
      }
      // Yoga's rule for "a browser wants GraphiQL": a GET to the endpoint whose Accept names text/html.
      if ((pathname === options.endpoint || pathname === `${options.endpoint}/`) && request.method === 'GET' && request.headers.get('accept')?.includes('text/html')) {
        endResponse(
          new Response((await load()).page, {
            status: 200,
            headers: {
              'content-type': 'text/html; charset=utf-8',
              // The page is small and names the current asset versions: always ask again. The same for every caller.
              'cache-control': 'public, no-cache',
              // GET /graphql answers JSON to other clients.
              vary: 'Accept',
              'content-security-policy': PAGE_CSP,
              'x-content-type-options': 'nosniff',
              'referrer-policy': 'no-referrer',
            },
          }),
        );
      }
    },
  };
}
