import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gql, NO_WORKERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { launchChromium, offlineContext, watchProblems } from './helpers/browser.js';
import { watchSubscriptions } from './helpers/subscriptions.js';
import { taskEventKey } from '../src/db/sql/taskEvents.js';
import { EXAMPLE_TABS } from '../src/edge/graphiql/example-tabs.js';

// GraphiQL in a real browser (headless Debian Chromium driven by playwright-core) against a gateway with AUTH=on,
// with every request to another origin blocked and recorded: the page must work with no outside network, the key
// typed into its Headers tab must reach queries (HTTP) and subscriptions (graphql-ws connection_init), and a
// refused subscription must end with the refusal shown, not spin.

/** Screenshots of each case land here, to look at when one fails. */
const SHOTS = '/tmp';

let browser: Browser;
let t: TestGateway;
/** What the Headers tab gets: reads identities and tasks. */
let key: string;
/** What the test itself drives the API with. */
let admin: string;

beforeAll(async () => {
  [browser, t] = await Promise.all([launchChromium(), startTestGateway('pglite', { ...NO_WORKERS, AUTH: 'on' })]);
  [key, admin] = await Promise.all([makeKey(t, ['identity:read', 'tasks:read']), makeKey(t, ['admin:all'])]);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

interface GraphiQLPage {
  page: Page;
  /** Every URL the page, its workers and its sockets asked for. */
  requested: string[];
  /** Requests to another origin, blocked. */
  foreign: string[];
  /** graphql-ws messages the page sent. */
  wsSent: string[];
  /** Uncaught errors and Content-Security-Policy refusals. */
  problems: string[];
  close(): Promise<void>;
}

/** A fresh browser context (no storage) on the gateway's GraphiQL, once its editors are up. */
async function openGraphiQL(): Promise<GraphiQLPage> {
  const { context, foreign } = await offlineContext(browser, [t.url], { viewport: { width: 1400, height: 900 } });
  const requested: string[] = [];
  const wsSent: string[] = [];
  context.on('request', (request) => requested.push(request.url()));
  const page = await context.newPage();
  const problems = watchProblems(page);
  page.on('websocket', (ws) => {
    requested.push(ws.url());
    ws.on('framesent', (frame) => wsSent.push(String(frame.payload)));
  });
  await page.goto(`${t.url}/graphql`);
  await headersEditor(page).waitFor();
  // GraphiQL fetches the schema at once, with the tab's placeholder key, and shows the refusal where responses go;
  // waiting for it keeps it from landing over the answer a case is looking for.
  await expectResponse(page, 'The API key is unknown, malformed or revoked.');
  return { page, requested, foreign, wsSent, problems, close: () => context.close() };
}

const headersEditor = (page: Page) => page.locator('.monaco-editor[data-uri$="request-headers.json"]');
const executeButton = (page: Page) => page.locator('.graphiql-execute-button');

/** Text as it reads on screen, with every run of white space (Monaco's are non-breaking; long lines wrap) as one space. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

/** The response pane as it reads on screen. */
async function responseText(page: Page): Promise<string> {
  return flat(await page.locator('.graphiql-response .view-lines').innerText());
}

/** What a user does: open the Headers tab, select all of it, and type the new headers over it. */
async function typeHeaders(page: Page, headers: Record<string, string>): Promise<void> {
  await page.locator('.graphiql-editor-tools button', { hasText: 'Headers' }).click();
  await headersEditor(page).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  // On one line: Monaco closes brackets as they are typed, and a typed newline would be indented after them.
  await page.keyboard.insertText(JSON.stringify(headers));
}

async function openTab(page: Page, title: string): Promise<void> {
  const tab = EXAMPLE_TABS.find((t) => new RegExp(`^(query|mutation|subscription) ${title}\\b`, 'm').test(t.query));
  if (!tab) throw new Error(`no example tab ${title}`);
  // A DOM click: GraphiQL's tabs can be dragged, and a synthetic mouse press that lands as the tab starts to
  // move is taken for the start of a drag.
  await page.locator('.graphiql-tab-button', { hasText: title }).dispatchEvent('click');
  await expect.poll(() => page.locator('.graphiql-tab-active').innerText()).toBe(title);
  // GraphiQL reads the operation name of the editor's document 100 ms after the editor changes, and saves the
  // document as graphiql:query then; a run before that would send the previous tab's operation name.
  await expect.poll(() => page.evaluate(() => localStorage.getItem('graphiql:query'))).toBe(tab.query);
}

async function expectResponse(page: Page, ...fragments: string[]): Promise<void> {
  for (const fragment of fragments) await expect.poll(() => responseText(page), { timeout: 10_000 }).toContain(flat(fragment));
}

/** Not running and not spinning: GraphiQL considers the operation over. */
async function expectSettled(page: Page): Promise<void> {
  await expect.poll(() => executeButton(page).getAttribute('aria-label')).toMatch(/^Execute query/);
  expect(await page.locator('.graphiql-response .graphiql-spinner').count()).toBe(0);
}

describe('GraphiQL in a browser, AUTH=on', () => {
  it('loads with nothing from outside the gateway: page, script, styles, icon and the three Monaco workers', async () => {
    const g = await openGraphiQL();
    try {
      // The workers start once Monaco runs.
      await expect.poll(() => g.requested.filter((u) => /\/graphiql\/\w+\.worker\.[0-9a-f]{12}\.js$/.test(u)).length, { timeout: 10_000 }).toBe(3);
      await g.page.screenshot({ path: `${SHOTS}/graphiql-loaded.png` });
      expect(g.foreign).toEqual([]);
      expect(g.requested.filter((u) => new URL(u).host !== new URL(t.url).host)).toEqual([]);
      expect(g.problems).toEqual([]);
      expect(await g.page.locator('.graphiql-tab-button').allInnerTexts()).toEqual(['Person', 'CreateQueue', 'CreateTask', 'TaskStatus', 'Jobs', 'Signatures', 'SendNotification', 'StubNotifications']);
    } finally {
      await g.close();
    }
  });

  it('a query with the key typed into the Headers tab shows the data; without a key it shows the 401 refusal', async () => {
    const g = await openGraphiQL();
    try {
      await typeHeaders(g.page, { Authorization: `Bearer ${key}` });
      await executeButton(g.page).click();
      await expectResponse(g.page, '"lastName": "Petrov"', '"snils": "112-233-445 95"');
      // X-IdpScopes typed beside the key narrows the person as it does for any client.
      await typeHeaders(g.page, { Authorization: `Bearer ${key}`, 'X-IdpScopes': 'fullname' });
      await executeButton(g.page).click();
      await expectResponse(g.page, '"snils": null');
      expect(await responseText(g.page)).toContain('"lastName": "Petrov"');
      // The schema, fetched with the same headers, fills the documentation.
      await g.page.locator('button[aria-label^="Re-fetch GraphQL schema"]').click();
      await g.page.locator('button[aria-label="Show Documentation Explorer"]').click();
      await expect.poll(() => g.page.locator('.graphiql-doc-explorer').innerText(), { timeout: 10_000 }).toContain('Subscription');
      await g.page.screenshot({ path: `${SHOTS}/graphiql-query.png` });
      await typeHeaders(g.page, {});
      await executeButton(g.page).click();
      await expectResponse(g.page, 'An API key is required', 'UNAUTHENTICATED');
      await expectSettled(g.page);
      expect(g.foreign).toEqual([]);
      expect(g.problems).toEqual([]);
    } finally {
      await g.close();
    }
  });

  it('the taskStatusChanged subscription carries the Headers tab to graphql-ws, shows each new status and ends after the end status', async () => {
    await gql(t.url, 'mutation { createQueue(input: {name: "demo"}) { name } }', {}, bearer(admin));
    // The subscription emits changes only: the task changes once the gateway follows it (same process, so watch it).
    const follows = watchSubscriptions(t.gateway);
    const g = await openGraphiQL();
    try {
      await openTab(g.page, 'TaskStatus');
      await typeHeaders(g.page, { 'x-api-key': key });
      await executeButton(g.page).click();
      await follows.ready('task', taskEventKey('demo', 'hello'));
      expect(g.wsSent.map((m) => JSON.parse(m) as { type: string; payload?: unknown }).find((m) => m.type === 'connection_init')?.payload).toEqual({ 'x-api-key': key });
      const task = { queueName: 'demo', name: 'hello', target: { url: 'https://service.example/hooks/hello' }, scheduleTime: '2099-01-01T00:00:00Z' };
      const created = await gql(t.url, 'mutation($i: CreateTaskInput!) { createTask(input: $i) { status } }', { i: task }, bearer(admin));
      expect(created.data?.createTask.status).toBe('BLOCKED');
      await expectResponse(g.page, '"status": "BLOCKED"');
      expect(await executeButton(g.page).getAttribute('aria-label')).toMatch(/^Stop query/);
      const cancelled = await gql(t.url, 'mutation { cancelTask(queueName: "demo", name: "hello") { status } }', {}, bearer(admin));
      expect(cancelled.data?.cancelTask.status).toBe('CANCELLED');
      await expectResponse(g.page, '"status": "CANCELLED"');
      await g.page.screenshot({ path: `${SHOTS}/graphiql-subscription.png` });
      // CANCELLED is an end status: the server completes the subscription and GraphiQL stops by itself.
      await expectSettled(g.page);
      expect(g.requested.filter((u) => u.startsWith('ws'))).toEqual([`${t.url.replace('http', 'ws')}/graphql`]);
      expect(g.foreign).toEqual([]);
      expect(g.problems).toEqual([]);
    } finally {
      await g.close();
    }
  });

  it('a subscription with a wrong or no key ends with the refusal shown instead of spinning', async () => {
    const g = await openGraphiQL();
    try {
      await openTab(g.page, 'TaskStatus');
      // The tab's own headers: the placeholder that says where the key goes.
      expect(flat(await headersEditor(g.page).innerText())).toContain('Bearer <your API key>');
      await executeButton(g.page).click();
      await expectResponse(g.page, 'Connection refused by the gateway: 4403 The API key is unknown, malformed or revoked.');
      await expectSettled(g.page);
      await g.page.screenshot({ path: `${SHOTS}/graphiql-refused.png` });
      await typeHeaders(g.page, {});
      await executeButton(g.page).click();
      await expectResponse(g.page, 'Connection refused by the gateway: 4403 An API key is required');
      await expectSettled(g.page);
      expect(g.foreign).toEqual([]);
      expect(g.problems).toEqual([]);
    } finally {
      await g.close();
    }
  });
});
