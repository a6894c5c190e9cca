import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { consoleDocumentId } from './helpers/console.js';
import { GATEWAY_RESOURCE } from './helpers/oidc-provider.js';
import { CONSOLE_CSP, consoleCsp, useConsole } from '../src/edge/plugins/use-console.js';
import { loadConfig } from '../src/config.js';
import { readConsoleManifest } from '../src/edge/console/assets.js';

// The operator console as HTTP serves it (the browser tests drive it): the page at /console with a strict policy
// and no caching, every asset it names from the gateway itself, immutable, revalidated by ETag and gzipped when the
// client takes it; its settings (where it may sign in besides the API key); its manifest of trusted documents,
// trusted whenever it is served; CONSOLE=off serves none of it. The assets are console/dist/, built by the test
// run's set-up.

/** An OpenID provider the gateway is told of but never reaches in these tests (nothing listens there). */
const ISSUER = 'http://127.0.0.1:9';

describe('the console over HTTP', () => {
  let t: TestGateway;
  let off: TestGateway;
  let signIn: TestGateway;
  beforeAll(async () => {
    [t, off, signIn] = await Promise.all([
      startTestGateway('pglite', { ...NO_WORKERS, AUTH: 'on' }),
      startTestGateway('pglite', { ...NO_WORKERS, CONSOLE: 'off' }),
      startTestGateway('pglite', { ...NO_WORKERS, AUTH: 'on', OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: GATEWAY_RESOURCE, CONSOLE_OIDC_CLIENT_ID: 'gateway-console' }),
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await off?.close();
    await signIn?.close();
  });

  /** The asset URLs the page names (script and styles). */
  const namedAssets = (page: string) => [...page.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);

  it('serves the page at /console and /console/ without a key, naming only its own assets, with a strict policy', async () => {
    for (const path of ['/console', '/console/']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('public, no-cache');
      expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(CONSOLE_CSP).toContain("script-src 'self'");
      expect(CONSOLE_CSP).not.toContain('unsafe');
      const page = await res.text();
      expect(page).toContain('<div id="root">');
      const assets = namedAssets(page);
      expect(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css'))).toBe(true);
      // Every URL in the page is the gateway's own (no CDN, no other host).
      expect([...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((u) => !u.startsWith('/console/assets/') && u !== 'data:,')).toEqual([]);
      expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    const head = await fetch(`${t.url}/console`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('serves each asset immutable, by ETag (304) and gzipped when asked; an unknown one is 404', async () => {
    const page = await (await fetch(`${t.url}/console`)).text();
    for (const path of namedAssets(page)) {
      const plain = await fetch(`${t.url}${path}`, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('content-type')).toMatch(path.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(plain.headers.get('content-encoding')).toBeNull();
      const body = Buffer.from(await plain.arrayBuffer());
      const etag = plain.headers.get('etag')!;
      expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
      const again = await fetch(`${t.url}${path}`, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      // fetch() would undo the gzip itself: read the raw bytes through node:http instead.
      const zipped = await rawGet(`${t.url}${path}`, { 'accept-encoding': 'gzip' });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(zipped.body).equals(body)).toBe(true);
    }
    // React's production build (a development one, as NODE_ENV=test would give, is nearly twice the size).
    const script = namedAssets(page).find((a) => a.endsWith('.js'))!;
    expect((await (await fetch(`${t.url}${script}`)).arrayBuffer()).byteLength).toBeLessThan(400_000);
    const missing = await fetch(`${t.url}/console/assets/index-nope.js`);
    expect(missing.status).toBe(404);
  });

  it('CONSOLE=off serves neither the page nor the assets', async () => {
    const page = await (await fetch(`${t.url}/console`)).text();
    expect((await fetch(`${off.url}/console`)).status).toBe(404);
    expect((await fetch(`${off.url}${namedAssets(page)[0]}`)).status).toBe(404);
    const notFound = (await (await fetch(`${t.url}/nope`)).json()) as { error: { message: string } };
    expect(notFound.error.message).toContain('the operator console at /console');
    expect(((await (await fetch(`${off.url}/nope`)).json()) as { error: { message: string } }).error.message).not.toContain('/console');
  });

  it('/console/settings.json names the provider, the public client, the resource and the scopes of the console\'s operations; no secret', async () => {
    const none = await fetch(`${t.url}/console/settings.json`);
    expect(none.status).toBe(200);
    expect(none.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(none.headers.get('cache-control')).toBe('public, no-cache');
    expect(await none.json()).toEqual({ provider: null });
    const named = await fetch(`${signIn.url}/console/settings.json`);
    expect(await named.json()).toEqual({
      provider: {
        issuer: ISSUER,
        name: '127.0.0.1:9',
        clientId: 'gateway-console',
        resource: GATEWAY_RESOURCE,
        scope: 'openid profile notifications:read notifications:write queues:read queues:write scheduler:read scheduler:write tasks:read tasks:write',
      },
    });
    // The page may reach the provider (discovery, the token endpoint), and only it besides the gateway.
    const page = await fetch(`${signIn.url}/console`);
    expect(page.headers.get('content-security-policy')).toBe(consoleCsp([ISSUER]));
    expect(page.headers.get('content-security-policy')).toContain(`connect-src 'self' ${ISSUER};`);
    expect((await fetch(`${off.url}/console/settings.json`)).status).toBe(404);
  });

  it("the console's operations run by id for a key whenever the console is served; CONSOLE=off does not list them", async () => {
    const body = JSON.stringify({ documentId: consoleDocumentId('Viewer'), variables: {} });
    const ask = async (g: TestGateway) =>
      (await fetch(`${g.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(await makeKey(g, ['queues:read'])) }, body })).json() as Promise<{
        data?: { viewer: { scopes: string[] } };
        errors?: { extensions: { code: string } }[];
      }>;
    expect((await ask(t)).data?.viewer.scopes).toEqual(['queues:read']);
    expect((await ask(off)).errors?.[0]?.extensions.code).toBe('PERSISTED_DOCUMENT_NOT_FOUND');
  });

  it('a console built after the gateway started is not served: its operations would be refused until a restart', async () => {
    const pageFrom = async (trustedManifest: string | null) => {
      let answer: Response | undefined;
      const request = new Request('http://127.0.0.1/console');
      await useConsole({ trustedManifest, provider: null }).onRequest!({ request, url: new URL(request.url), endResponse: (res: Response) => (answer = res) } as never);
      return answer!;
    };
    // The manifest read at start-up is the built one's: served.
    expect((await pageFrom(readConsoleManifest()!.text)).status).toBe(200);
    // Another one (a build made since), or none (the console was not built at start-up): refused with the remedy.
    for (const trusted of ['{}', null]) {
      const answer = await pageFrom(trusted);
      expect(answer.status).toBe(503);
      expect(await answer.text()).toContain('restart the gateway');
    }
  });

  it('CONSOLE_OIDC_CLIENT_ID needs OIDC_ISSUER and the console', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig({ HOST: '127.0.0.1', ...env });
        return null;
      } catch (error) {
        return (error as Error).message;
      }
    };
    const oidc = { OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: GATEWAY_RESOURCE };
    expect(refusal({ ...oidc, CONSOLE_OIDC_CLIENT_ID: 'gateway-console' })).toBeNull();
    expect(refusal({ CONSOLE_OIDC_CLIENT_ID: 'gateway-console' })).toContain('CONSOLE_OIDC_CLIENT_ID: set OIDC_ISSUER too');
    expect(refusal({ ...oidc, CONSOLE_OIDC_CLIENT_ID: 'gateway-console', CONSOLE: 'off' })).toContain('CONSOLE_OIDC_CLIENT_ID: the console is off');
  });
});

async function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { get } = await import('node:http');
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}
