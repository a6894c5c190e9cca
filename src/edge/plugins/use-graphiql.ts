import type { Plugin } from 'graphql-yoga';
import { ASSET_PREFIX, loadGraphiQLAssets, type Asset, type GraphiQLAssets } from '../graphiql/assets.js';
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

const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Whether Accept-Encoding allows gzip: its own weight, else that of `*`; a weight of 0 refuses. */
function acceptsGzip(acceptEncoding: string | null): boolean {
  const weights = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    weights.set(coding, q === undefined ? 1 : Number(q.slice(2)));
  }
  return (weights.get('gzip') ?? weights.get('*') ?? 0) > 0;
}

async function assetResponse(request: Request, found: Asset): Promise<Response> {
  const headers: Record<string, string> = {
    'content-type': found.type,
    'cache-control': IMMUTABLE,
    etag: found.etag,
    vary: 'accept-encoding',
    'x-content-type-options': 'nosniff',
  };
  if (request.headers.get('if-none-match')?.split(',').some((tag) => tag.trim() === found.etag)) return new Response(null, { status: 304, headers });
  let body = found.body;
  if (acceptsGzip(request.headers.get('accept-encoding'))) {
    body = await found.gzipped();
    headers['content-encoding'] = 'gzip';
  }
  headers['content-length'] = String(body.byteLength);
  return new Response(request.method === 'HEAD' ? null : body, { status: 200, headers });
}

export function useGraphiQL(options: GraphiQLOptions): Plugin {
  let loading: Promise<{ assets: GraphiQLAssets; page: string }> | undefined;
  const load = () =>
    (loading ??= loadGraphiQLAssets().then(
      (assets) => ({ assets, page: renderGraphiQLPage(assets.urls, { endpoint: options.endpoint, title: options.title, tabs: EXAMPLE_TABS, headers: startingHeaders(options.auth) }) }),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
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
