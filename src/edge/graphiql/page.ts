import type { AssetUrls } from './assets.js';
import type { ExampleTab } from './example-tabs.js';

// The GraphiQL page: a small HTML document that names the assets (src/edge/graphiql/assets.ts) and carries the
// GraphiQL options as JSON; the client script (client.browser.js) starts GraphiQL with them and its own fetcher.

export interface PageOptions {
  /** The GraphQL endpoint the page talks to (HTTP and graphql-ws). */
  endpoint: string;
  /** Shown in the browser tab and beside the logo. Plain text. */
  title: string;
  tabs: readonly ExampleTab[];
  /** The Headers tab of every example and new tab (JSON text), e.g. where the API key goes; omitted when empty. */
  headers: string;
}

/**
 * Nothing outside the gateway: the browser refuses any script, style, image, font, worker or connection from
 * elsewhere. Monaco and GraphiQL set inline styles and use data: fonts and images from their own stylesheet.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON that stays inert inside a <script> element (no `</script>`, no `<!--`). */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');

export function renderGraphiQLPage(urls: AssetUrls, options: PageOptions): string {
  const headers = options.headers || undefined;
  const config = {
    endpoint: options.endpoint,
    workers: urls.workers,
    graphiql: {
      // YogaGraphiQL puts the title in the page as HTML.
      title: escapeHtml(options.title),
      defaultTabs: options.tabs.map((tab) => ({ ...tab, headers })),
      defaultHeaders: headers,
    },
  };
  const title = escapeHtml(options.title);
  // `defer` keeps the scripts in order and runs them once the document is parsed.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · GraphiQL</title>
<link rel="icon" href="${urls.favicon}">
<link rel="stylesheet" href="${urls.styles}">
<script type="application/json" id="graphiql-config">${scriptJson(config)}</script>
<script defer src="${urls.graphqlWs}"></script>
<script defer src="${urls.client}"></script>
<script defer src="${urls.script}"></script>
</head>
<body class="no-focus-outline">
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="graphiql"></div>
</body>
</html>
`;
}
