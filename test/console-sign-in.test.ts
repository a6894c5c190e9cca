import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, offlineContext, watchProblems } from './helpers/browser.js';
import { consoleDocumentId, consoleOperations } from './helpers/console.js';
import { gql, NO_WORKERS, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { GATEWAY_RESOURCE, signingKey, startTestProvider, type TestAccount, type TestProvider } from './helpers/oidc-provider.js';

// The operator console signing in at a real OpenID provider (oidc-provider on loopback, its own sign-in and consent
// pages), in Debian's Chromium: the authorization code grant with PKCE as the console's public client
// (CONSOLE_OIDC_CLIENT_ID), back to /console with the page it left, the token in memory only and sent as Bearer on
// HTTP and in graphql-ws connection_init. The gateway holds tokens to trusted documents (the default), and trusts the
// console's own manifest because it serves the console: every operation goes by id. What the token's scopes allow is
// what the console offers. The browser reaches the gateway and the provider, nothing else.

const ARTIFACTS = resolve(import.meta.dirname, '..', 'test-artifacts', 'console');
const CLIENT_ID = 'gateway-console';
/** Holds every scope the console asks for. */
const OPERATOR: TestAccount = { login: 'olga', password: 'operator-password', name: 'Olga Operator' };
/** Holds the read scopes only: the provider grants those and rejects the rest. */
const WATCHER: TestAccount = { login: 'vera', password: 'watcher-password', name: 'Vera Watcher', scopes: ['queues:read', 'tasks:read', 'scheduler:read', 'notifications:read'] };
/** The gateway scopes of the console's operations: what it asks the provider for, beside `openid profile`. */
const CONSOLE_SCOPES = ['notifications:read', 'queues:read', 'queues:write', 'scheduler:read', 'scheduler:write', 'tasks:read', 'tasks:write'];

let browser: Browser;
let provider: TestProvider;
let t: TestGateway;
let admin: Record<string, string>;
/** Operation names by document id, from the console's manifest. */
let operationOf: Map<string, string>;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  [browser, provider] = await Promise.all([launchChromium(), (async () => startTestProvider([], [await signingKey('k1')], { accounts: [OPERATOR, WATCHER] }))()]);
  t = await startTestGateway('pglite', { ...NO_WORKERS, AUTH: 'on', OIDC_ISSUER: provider.issuer, OIDC_AUDIENCE: GATEWAY_RESOURCE, CONSOLE_OIDC_CLIENT_ID: CLIENT_ID });
  // The console's address is known once the gateway listens: registered then, as an operator registers it.
  provider.addClient({ id: CLIENT_ID, redirectUris: [`${t.url}/console`] });
  admin = bearer(await makeKey(t, ['admin:all']));
  expect((await rpc(t.url, 'createQueue', { name: 'mail' }, {}, admin)).status).toBe(200);
  operationOf = consoleOperations();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await provider?.close();
});

interface SignedIn {
  page: Page;
  foreign: string[];
  problems: string[];
  /** The scopes the provider's consent page listed. */
  asked: string[];
  /** What the console POSTed to /graphql, and with which Authorization, from the first page load on. */
  posted: { body: Record<string, unknown>; authorization: string | undefined }[];
  wsSent: { type: string; payload?: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** A fresh browser (no provider session) on /console#/queues, signed in as `account` at the provider. */
async function signIn(account: TestAccount): Promise<SignedIn> {
  const { context, foreign } = await offlineContext(browser, [t.url, provider.issuer], { viewport: { width: 1280, height: 860 } });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const problems = watchProblems(page);
  const posted: SignedIn['posted'] = [];
  page.on('request', (request) => {
    if (request.url() === `${t.url}/graphql` && request.method() === 'POST') posted.push({ body: request.postDataJSON() as Record<string, unknown>, authorization: request.headers().authorization });
  });
  const wsSent: SignedIn['wsSent'] = [];
  page.on('websocket', (ws) => ws.on('framesent', (frame) => wsSent.push(JSON.parse(String(frame.payload)))));
  await page.goto(`${t.url}/console#/queues`);
  // The API key form stays beside the provider's button.
  await page.getByLabel('API key').waitFor();
  await page.screenshot({ path: join(ARTIFACTS, 'sign-in-provider-1280.png') });
  await page.getByRole('button', { name: `Sign in with ${new URL(provider.issuer).host}` }).click();

  // The provider's pages: sign-in, then consent to what the console asks for.
  await page.waitForURL(`${provider.issuer}/interaction/*`);
  await page.getByLabel('Login').fill(account.login);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Allow access' }).waitFor();
  const asked = await page.getByRole('listitem').allInnerTexts();
  await page.getByRole('button', { name: 'Allow' }).click();

  // Back on the page it left, the code gone from the address bar, signed in by name.
  await page.getByRole('heading', { level: 1, name: 'Queues' }).waitFor();
  expect(page.url()).toBe(`${t.url}/console#/queues`);
  await expect.poll(() => page.locator('.key-name').innerText()).toBe(account.name);
  return { page, foreign, problems, asked, posted, wsSent, close: () => context.close() };
}

const queueRow = (page: Page, name: string) => page.locator(`[data-queue="${name}"]`);

describe('the console signs in at the OpenID provider', () => {
  it('a person with write scopes signs in on the provider\'s pages and pauses a queue, every operation by id with the token', async () => {
    const c = await signIn(OPERATOR);
    try {
      expect(c.asked).toEqual(expect.arrayContaining(CONSOLE_SCOPES));
      await queueRow(c.page, 'mail').getByRole('button', { name: 'Pause' }).click();
      await expect.poll(async () => (await rpc(t.url, 'getQueue', { name: 'mail' }, {}, admin)).body.result.paused).toBe(true);
      await queueRow(c.page, 'mail').getByRole('button', { name: 'Resume' }).waitFor();
      await c.page.screenshot({ path: join(ARTIFACTS, 'signed-in-1280.png'), fullPage: true });

      // By id only, with the person's token, on HTTP and in connection_init; nothing kept in storage.
      expect(c.posted.every((p) => typeof p.body.documentId === 'string' && !('query' in p.body))).toBe(true);
      expect(c.posted.map((p) => operationOf.get(p.body.documentId as string))).toEqual(expect.arrayContaining(['Viewer', 'Queues', 'PauseQueue']));
      // The first page load asked, without a credential, whether the gateway wants one; every later call has the token.
      const [first, ...signedIn] = c.posted;
      expect([operationOf.get(first!.body.documentId as string), first!.authorization]).toEqual(['Viewer', undefined]);
      const authorization = signedIn[0]!.authorization!;
      expect(authorization).toMatch(/^Bearer eyJ/);
      expect(signedIn.every((p) => p.authorization === authorization)).toBe(true);
      await expect.poll(() => c.wsSent.find((m) => m.type === 'connection_init')?.payload).toEqual({ authorization });
      expect(c.wsSent.filter((m) => m.type === 'subscribe').every((m) => m.payload?.query === '' && operationOf.has(m.payload?.documentId as string))).toBe(true);
      expect(await c.page.evaluate(() => [localStorage.length, sessionStorage.length])).toEqual([0, 0]);
      expect(c.foreign).toEqual([]);
      expect(c.problems).toEqual([]);

      // The console ran because its documents are trusted: the same token with a text of its own is refused.
      const unlisted = await gql(t.url, '{ queues(first: 1) { totalCount } }', {}, { authorization });
      expect(unlisted.errors?.[0]?.extensions?.code).toBe('PERSISTED_DOCUMENT_REQUIRED');
    } finally {
      await c.close();
    }
  });

  it('a person with read scopes only sees no action buttons, and the gateway would refuse the action anyway', async () => {
    const c = await signIn(WATCHER);
    try {
      await queueRow(c.page, 'mail').waitFor();
      expect((await c.page.locator('main button').allInnerTexts()).filter((b) => !/First|Previous|Next|Last|^Go$/.test(b))).toEqual([]);
      expect(await queueRow(c.page, 'mail').locator('.actions').innerText()).toContain('read only');
      // The scopes the token carries: what the provider granted, not what the console asked for.
      expect((await c.page.locator('.who').getAttribute('title'))!.split(' ').sort()).toEqual([...WATCHER.scopes!].sort());
      const refused = await fetch(`${t.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: c.posted.at(-1)!.authorization! },
        body: JSON.stringify({ documentId: consoleDocumentId('PauseQueue'), variables: { name: 'mail' } }),
      });
      expect(refused.status).toBe(403);
      expect(c.foreign).toEqual([]);
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
