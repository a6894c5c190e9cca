// What the gateway tells the console at start (/console/settings.json, src/edge/console/sign-in.ts): where it may
// sign its operator in besides the API key. Nothing in it is secret.

/** The OpenID provider the console signs in at, as a public client (authorization code with PKCE). */
export interface Provider {
  /** The provider's issuer (the gateway's OIDC_ISSUER). */
  issuer: string;
  /** What the sign-in button calls it. */
  name: string;
  /** The console's client id there (CONSOLE_OIDC_CLIENT_ID). */
  clientId: string;
  /** The gateway's resource indicator (OIDC_AUDIENCE): the token is made for it. */
  resource: string;
  /** What to ask for: `openid profile` and the gateway scopes of the console's operations. */
  scope: string;
}

/** The provider, or null when the console signs in with API keys only (or the settings cannot be read). */
export async function loadProvider(): Promise<Provider | null> {
  try {
    const res = await fetch('/console/settings.json', { headers: { accept: 'application/json' } });
    if (!res.ok) return null;
    return ((await res.json()) as { provider: Provider | null }).provider;
  } catch {
    return null;
  }
}

/** Whether this page load is the provider sending the browser back to the console (with a code or an error). */
export function isSignInReturn(): boolean {
  const params = new URLSearchParams(location.search);
  return params.has('state') && (params.has('code') || params.has('error'));
}
