import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { parse, getOperationAST } from 'graphql';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskEventKey } from '../src/db/sql/taskEvents.js';
import type { AppConfig } from '../examples/front-end/src/config.js';
import { launchChromium, offlineContext, watchProblems } from './helpers/browser.js';
import { DATABASES } from './helpers/databases.js';
import { gql, NO_WORKERS, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { GATEWAY_RESOURCE, signingKey, startTestProvider, type TestProvider } from './helpers/oidc-provider.js';
import { watchSubscriptions } from './helpers/subscriptions.js';

// The example front end (examples/front-end), built as its README builds it and driven in Debian's Chromium as a
// person uses it: sign in on a real OpenID provider's pages (oidc-provider on loopback, authorization code + PKCE,
// a public client), then the app lists the queues (a query), creates a task (a mutation) and follows its status
// live (a subscription over graphql-ws), every one of them sent by its id from the manifest the gateway loads, with
// the person's access token. The app, the gateway and the provider are three origins; every other one is blocked.

const ROOT = resolve(import.meta.dirname, '..');
const EXAMPLE = join(ROOT, 'examples/front-end');
const MANIFEST = join(EXAMPLE, 'src/gql/persisted-documents.json');
const ACCOUNT = { login: 'ivan', password: 'petrov', name: 'Ivan Petrov' };
const CLIENT_ID = 'front-end';
/** A screenshot of the app at the end of each run (git-ignored), to look at when one fails. */
const ARTIFACTS = join(ROOT, 'test-artifacts', 'front-end');

/** Runs a tool of the repository's node_modules in the example's directory, as `npx <tool>` there does. */
async function run(tool: string, args: string[]): Promise<void> {
  const child = spawn(join(ROOT, 'node_modules/.bin', tool), args, { cwd: EXAMPLE, env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((ok) => child.on('exit', ok));
  if (code !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${code}):\n${output}`);
}

interface ServedApp {
  origin: string;
  /** What /config.json answers: the deployment's settings, replacing the built one. */
  config?: AppConfig;
  close(): Promise<void>;
}

/** The built app on a static server of its own (its own origin), as any static host would serve it. */
async function serveApp(dir: string): Promise<ServedApp> {
  const types: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };
  const app: ServedApp = { origin: '', close: async () => undefined };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://app').pathname;
    if (path === '/config.json') return void res.writeHead(200, { 'content-type': types['.json'] }).end(JSON.stringify(app.config));
    const file = join(dir, path === '/' ? 'index.html' : path);
    if (!file.startsWith(`${dir}/`)) return void res.writeHead(404).end();
    readFile(file).then(
      (body) => res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' }).end(body),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  app.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  app.close = () => new Promise<void>((ok) => server.close(() => ok()));
  return app;
}

let dist: string;
let app: ServedApp;
let provider: TestProvider;
let browser: Browser;
/** Document ids by operation name, from the manifest the build wrote. */
let ids: Record<string, string>;

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'front-end-'));
  mkdirSync(ARTIFACTS, { recursive: true });
  const build = (async () => {
    // The front-end team's build: typed documents and the manifest, then the bundle; the compiler checks the app
    // against the operations' types meanwhile (Vite only strips them).
    await run('graphql-codegen', ['--config', 'codegen.ts', '--silent']);
    await Promise.all([run('tsc', ['-p', 'tsconfig.json']), run('vite', ['build', '--outDir', dist, '--emptyOutDir', '--logLevel', 'warn'])]);
  })();
  [browser, app] = await Promise.all([launchChromium(), serveApp(dist), build]);
  provider = await startTestProvider([{ id: CLIENT_ID, redirectUris: [`${app.origin}/`] }], [await signingKey('k1')], { accounts: [ACCOUNT] });
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
  ids = Object.fromEntries(Object.entries(manifest).map(([id, text]) => [getOperationAST(parse(text))!.name!.value, id]));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await provider?.close();
  await app?.close();
  rmSync(dist, { recursive: true, force: true });
});

describe.each(DATABASES)('the example front end in Chromium, on %s', (kind) => {
  let t: TestGateway;
  let admin: Record<string, string>;
  beforeAll(async () => {
    t = await startTestGateway(kind, {
      ...NO_WORKERS,
      AUTH: 'on',
      OIDC_ISSUER: provider.issuer,
      OIDC_AUDIENCE: GATEWAY_RESOURCE,
      CORS_ORIGINS: app.origin,
      TRUSTED_DOCUMENTS_MANIFESTS: MANIFEST,
    });
    app.config = { gateway: t.url, issuer: provider.issuer, clientId: CLIENT_ID, resource: GATEWAY_RESOURCE };
    admin = bearer(await makeKey(t, ['admin:all']));
    const created = await rpc(t.url, 'createQueue', { name: 'mail' }, {}, admin);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
  });
  afterAll(async () => t?.close());

  it("signs in on the provider's page, then lists queues, creates a task and follows its status live, all by document id", async () => {
    const { context, foreign } = await offlineContext(browser, [app.origin, t.url, provider.issuer]);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    const problems = watchProblems(page);
    const posted: { body: Record<string, unknown>; authorization?: string }[] = [];
    page.on('request', (request) => {
      if (request.url() === `${t.url}/graphql` && request.method() === 'POST') posted.push({ body: request.postDataJSON() as Record<string, unknown>, authorization: request.headers().authorization });
    });
    const wsSent: { type: string; payload?: Record<string, unknown> }[] = [];
    const wsReceived: { type: string }[] = [];
    page.on('websocket', (ws) => {
      ws.on('framesent', (frame) => wsSent.push(JSON.parse(String(frame.payload))));
      ws.on('framereceived', (frame) => wsReceived.push(JSON.parse(String(frame.payload))));
    });
    try {
      await page.goto(`${app.origin}/`);
      await page.getByRole('button', { name: 'Sign in' }).click();

      // The provider's pages: sign-in, then consent to what the app asks for.
      await page.waitForURL(`${provider.issuer}/interaction/*`);
      await page.getByLabel('Login').fill(ACCOUNT.login);
      await page.getByLabel('Password').fill(ACCOUNT.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Allow access' }).waitFor();
      expect(await page.getByRole('listitem').allInnerTexts()).toEqual(expect.arrayContaining(['queues:read', 'tasks:read', 'tasks:write']));
      await page.getByRole('button', { name: 'Allow' }).click();

      // Back on the app with a code it traded for tokens; the code has left the address bar. Two redirects and a
      // token exchange: given the context's own wait rather than expect.poll's 5 s, which a busy host can exceed.
      await expect.poll(() => page.locator('#who').innerText(), { timeout: 15_000 }).toBe(ACCOUNT.name);
      expect(page.url()).toBe(`${app.origin}/`);
      await expect.poll(() => page.locator('#queues li').allInnerTexts()).toEqual(['mail']);
      expect((await page.locator('#scopes').innerText()).split(' ')).toEqual(expect.arrayContaining(['queues:read', 'tasks:read', 'tasks:write']));

      // The mutation, then the task's statuses live: READY at creation, CANCELLED once a backend cancels it.
      const follows = watchSubscriptions(t.gateway);
      await page.getByLabel('Name').fill('hello');
      await page.getByLabel('Target URL').fill('https://service.example/hooks/hello');
      await page.getByRole('button', { name: 'Create and follow' }).click();
      await expect.poll(() => page.locator('#statuses li').allInnerTexts()).toEqual(['READY']);
      await follows.ready('task', taskEventKey('mail', 'hello'));
      const cancelled = await rpc(t.url, 'cancelTask', { queueName: 'mail', name: 'hello' }, {}, admin);
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
      await expect.poll(() => page.locator('#statuses li').allInnerTexts()).toEqual(['READY', 'CANCELLED']);
      // CANCELLED is an end status: the gateway completes the subscription.
      await expect.poll(() => wsReceived.map((m) => m.type)).toContain('complete');

      // What went over the wire: ids only, the person's token on HTTP and in connection_init, nothing else stored.
      expect(posted.map((p) => p.body)).toEqual([
        { documentId: ids.Queues, variables: {} },
        { documentId: ids.CreateTask, variables: { input: { queueName: 'mail', name: 'hello', target: { url: 'https://service.example/hooks/hello' } } } },
      ]);
      const authorization = posted[0]!.authorization!;
      expect(authorization).toMatch(/^Bearer eyJ/);
      expect(posted.every((p) => p.authorization === authorization)).toBe(true);
      expect(wsSent.find((m) => m.type === 'connection_init')?.payload).toEqual({ authorization });
      expect(wsSent.find((m) => m.type === 'subscribe')?.payload).toEqual({ query: '', documentId: ids.TaskStatus, variables: { queueName: 'mail', name: 'hello' } });
      expect(await page.evaluate(() => [localStorage.length, sessionStorage.length])).toEqual([0, 0]);
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);

      // The same token with a document of its own is refused: a token caller runs the manifest's documents only.
      const unlisted = await gql(t.url, '{ queues(first: 1) { totalCount } }', {}, { authorization });
      expect(unlisted.status).toBe(400);
      expect(unlisted.errors?.[0]?.extensions?.code).toBe('PERSISTED_DOCUMENT_REQUIRED');
    } finally {
      await page.screenshot({ path: join(ARTIFACTS, `${kind}.png`), fullPage: true });
      await context.close();
    }
  });
});
