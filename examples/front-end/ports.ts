import type { AppConfig } from './src/config.js';

// Where the programs of "Try it on your machine" (README.md) listen, in one place: the gateway (`npm start`, whose
// own variable is PORT), the OpenID provider (dev-provider.ts) and the app (`vite preview`). Each default can be
// moved with a variable, read by dev-provider.ts, by vite.config.ts for `vite preview` and for the config.json that
// `vite build` writes (where the app looks for the gateway and the provider), so set them alike for both.

export const DEFAULT_PORTS = { gateway: 4000, provider: 4010, app: 4173 } as const;
export const PORT_VARIABLES = { gateway: 'GATEWAY_PORT', provider: 'PROVIDER_PORT', app: 'APP_PORT' } as const;

type Ports = Record<keyof typeof DEFAULT_PORTS, number>;

export function localPorts(env: Record<string, string | undefined> = process.env): Ports {
  const read = (name: keyof Ports): number => {
    const raw = env[PORT_VARIABLES[name]];
    if (raw === undefined || raw === '') return DEFAULT_PORTS[name];
    const port = Number(raw);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${PORT_VARIABLES[name]}=${raw}: a port is a whole number from 1 to 65535`);
    return port;
  };
  return { gateway: read('gateway'), provider: read('provider'), app: read('app') };
}

/** The three origins on loopback (`127.0.0.1`, never `localhost`: the provider and CORS_ORIGINS compare exactly). */
export function localOrigins(env?: Record<string, string | undefined>): Record<keyof Ports, string> {
  const ports = localPorts(env);
  return { gateway: `http://127.0.0.1:${ports.gateway}`, provider: `http://127.0.0.1:${ports.provider}`, app: `http://127.0.0.1:${ports.app}` };
}

/** The app's config.json for this machine: the gateway and dev-provider.ts on loopback. */
export function localAppConfig(env?: Record<string, string | undefined>): AppConfig {
  const origins = localOrigins(env);
  return { gateway: origins.gateway, issuer: origins.provider, clientId: 'front-end', resource: 'https://gateway.test/api' };
}
