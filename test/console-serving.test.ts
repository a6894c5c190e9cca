import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_WORKERS, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { CONSOLE_CSP } from '../src/edge/plugins/use-console.js';

// The operator console as HTTP serves it (the browser test drives it): the page at /console with a strict policy
// and no caching, every asset it names from the gateway itself, immutable, revalidated by ETag and gzipped when the
// client takes it; CONSOLE=off serves none of it. The assets are console/dist/, built by the test run's set-up.

describe('the console over HTTP', () => {
  let t: TestGateway;
  let off: TestGateway;
  beforeAll(async () => {
    [t, off] = await Promise.all([startTestGateway('pglite', { ...NO_WORKERS, AUTH: 'on' }), startTestGateway('pglite', { ...NO_WORKERS, CONSOLE: 'off' })]);
  });
  afterAll(async () => {
    await t?.close();
    await off?.close();
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
