import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

// Debian's Chromium, headless, driven by playwright-core (which downloads no browser of its own), for the tests that
// load a page as a user would. Every context they open reaches only the origins a test names: anything else, over
// HTTP or WebSocket, is blocked and recorded, so a page that would need the outside network fails its test instead
// of quietly working on a machine that has one.

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's Chromium (apt-get install chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export interface OfflineContext {
  context: BrowserContext;
  /** Requests and sockets to any other origin, blocked. */
  foreign: string[];
}

/** A fresh context (no storage, no cookies) that reaches `origins` (`http://127.0.0.1:4000`) and nothing else. */
export async function offlineContext(browser: Browser, origins: string[], options: BrowserContextOptions = {}): Promise<OfflineContext> {
  const allowed = new Set(origins.map((o) => new URL(o).origin));
  // A socket's URL has its own scheme (ws:), so sockets are matched on host and port.
  const allowedHosts = new Set(origins.map((o) => new URL(o).host));
  const context = await browser.newContext(options);
  const foreign: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (allowed.has(new URL(url).origin)) return route.continue();
    foreign.push(url);
    return route.abort('blockedbyclient');
  });
  await context.routeWebSocket(
    (url) => !allowedHosts.has(url.host),
    (ws) => {
      foreign.push(ws.url());
      return ws.close();
    },
  );
  return { context, foreign };
}

/** Collects a page's uncaught errors and the Content-Security-Policy refusals Chromium logs. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (/Content.Security.Policy|Refused to/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  return problems;
}
