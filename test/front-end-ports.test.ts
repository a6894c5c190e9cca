import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfigFromFile, type Plugin } from 'vite';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PORTS, PORT_VARIABLES, localAppConfig, localOrigins, localPorts } from '../examples/front-end/ports.js';
import { freePort } from './helpers/ports.js';
import { GATEWAY_RESOURCE } from './helpers/oidc-provider.js';

// The example front end's ports live in examples/front-end/ports.ts alone: the provider (dev-provider.ts), `vite
// preview` and the config.json of the build all read them there, and each moves with its variable.

const ROOT = resolve(import.meta.dirname, '..');
const EXAMPLE = join(ROOT, 'examples/front-end');
/** Output and generated code (git-ignored), and the two places that name ports: ports.ts and the README's tutorial. */
const NOT_CODE = ['dist/', 'src/gql/', 'node_modules/', 'ports.ts', 'README.md'];
const PORT_LITERAL = /\b(?:127\.0\.0\.1|localhost):\d+|\bport\s*:\s*\d+|\b(?:4000|4010|4173|5173)\b/;

describe('examples/front-end: ports in one place', () => {
  it('no file but ports.ts writes a port', () => {
    const files = readdirSync(EXAMPLE, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(EXAMPLE, join(e.parentPath, e.name)))
      .filter((f) => !NOT_CODE.some((skip) => f === skip || f.startsWith(skip)));
    expect(files).toContain('vite.config.ts');
    expect(files).toContain('dev-provider.ts');
    const offending = files.flatMap((f) =>
      readFileSync(join(EXAMPLE, f), 'utf8')
        .split('\n')
        .flatMap((line, i) => (PORT_LITERAL.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offending).toEqual([]);
  });

  it('the defaults, and each port moved by its variable', () => {
    expect(localPorts({})).toEqual(DEFAULT_PORTS);
    const moved = { [PORT_VARIABLES.gateway]: '4100', [PORT_VARIABLES.provider]: '4110', [PORT_VARIABLES.app]: '4273' };
    expect(localAppConfig(moved)).toEqual({ gateway: 'http://127.0.0.1:4100', issuer: 'http://127.0.0.1:4110', clientId: 'front-end', resource: GATEWAY_RESOURCE });
    expect(() => localPorts({ APP_PORT: 'eighty' })).toThrow('APP_PORT=eighty: a port is a whole number from 1 to 65535');
  });

  it("vite.config.ts: `vite preview`'s port and the build's config.json follow the variables", async () => {
    const env = { [PORT_VARIABLES.gateway]: '4100', [PORT_VARIABLES.provider]: '4110', [PORT_VARIABLES.app]: '4273' };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      const loaded = await loadConfigFromFile({ command: 'build', mode: 'production' }, join(EXAMPLE, 'vite.config.ts'), EXAMPLE, 'silent');
      expect(loaded?.config.preview?.port).toBe(4273);
      const plugin = (loaded!.config.plugins as Plugin[]).find((p) => p.name === 'local-config-json')!;
      const emitted: { fileName?: string; source?: unknown }[] = [];
      (plugin.generateBundle as (this: unknown) => void).call({ emitFile: (file: { fileName?: string; source?: unknown }) => emitted.push(file) });
      expect(emitted.map((f) => f.fileName)).toEqual(['config.json']);
      expect(JSON.parse(String(emitted[0]!.source))).toEqual(localAppConfig(env));
    } finally {
      for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
    }
  });

  it('dev-provider.ts listens on PROVIDER_PORT and sends sign-ins back to the app on APP_PORT only', async () => {
    const env = { [PORT_VARIABLES.provider]: String(await freePort()), [PORT_VARIABLES.app]: String(await freePort()) };
    const origins = localOrigins(env);
    const child = spawn(join(ROOT, 'node_modules/.bin/tsx'), ['dev-provider.ts'], { cwd: EXAMPLE, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((ok, fail) => {
        createInterface({ input: child.stdout! }).once('line', ok);
        child.once('exit', (code) => fail(new Error(`dev-provider.ts exited (${code})`)));
      });
      expect(line).toContain(`OpenID provider at ${origins.provider},`);
      const discovery = (await (await fetch(`${origins.provider}/.well-known/openid-configuration`)).json()) as { issuer: string; authorization_endpoint: string };
      expect(discovery.issuer).toBe(origins.provider);
      const signIn = (redirectUri: string) => {
        const url = new URL(discovery.authorization_endpoint);
        const verifier = randomBytes(32).toString('base64url');
        url.search = new URLSearchParams({
          client_id: 'front-end',
          redirect_uri: redirectUri,
          response_type: 'code',
          scope: 'openid',
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          code_challenge_method: 'S256',
        }).toString();
        return fetch(url, { redirect: 'manual' });
      };
      // The registered address goes on to the sign-in page; the default app port is refused once APP_PORT moved it.
      expect((await signIn(`${origins.app}/`)).headers.get('location')).toMatch(/^\/interaction\//);
      expect((await signIn(`${localOrigins({}).app}/`)).status).toBe(400);
    } finally {
      child.kill();
    }
  });
});
