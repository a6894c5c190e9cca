import * as oauth from 'oauth4webapi';
import type { AppConfig } from './config.js';

// Signing in with the authorization code grant and PKCE (RFC 7636), through oauth4webapi: the browser goes to the
// provider's page, the person signs in there (this app never sees a password), and comes back with a one-time code
// that only this page can trade for tokens, because only it holds the code verifier whose hash it sent first.

/** The gateway's scopes this app's operations need, and `openid profile` for the person's name. */
const SCOPE = 'openid profile queues:read tasks:read tasks:write';
/** The verifier and state kept across the trip to the provider: the page is left, so memory cannot hold them. */
const PENDING = 'sign-in-pending';

export interface Session {
  accessToken: string;
  /** The person's name from the ID token (or its subject). */
  name: string;
}

/** Where the provider sends the browser back: this page, as registered with the provider. */
const redirectUri = () => `${location.origin}${location.pathname}`;

/** A plain-http provider is allowed on this machine only (the tutorial's), as the gateway does for OIDC_ISSUER. */
function httpOptions(issuer: URL) {
  const loopback = issuer.hostname === 'localhost' || issuer.hostname === '[::1]' || issuer.hostname.startsWith('127.');
  return { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' && loopback };
}

/** The provider's endpoints, from its discovery document. */
async function discover(config: AppConfig): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(config.issuer);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...httpOptions(issuer) }));
}

/** Leaves for the provider's sign-in page. */
export async function startSignIn(config: AppConfig): Promise<void> {
  const provider = await discover(config);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state }));
  const url = new URL(provider.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: config.clientId,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: SCOPE,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(config.resource && { resource: config.resource }),
  }).toString();
  location.assign(url);
}

/** Back from the provider: trades the code for tokens. Undefined when this page load is not such a return. */
export async function finishSignIn(config: AppConfig): Promise<Session | undefined> {
  const back = new URL(location.href);
  if (!back.searchParams.has('code') && !back.searchParams.has('error')) return undefined;
  const pending = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  // The code is single-use and worthless without the verifier, but it has no business in the address bar or history.
  history.replaceState(null, '', redirectUri());
  if (!pending) throw new Error('This sign-in was not started here (or was finished already): sign in again.');
  const { verifier, state } = JSON.parse(pending) as { verifier: string; state: string };
  const provider = await discover(config);
  const client: oauth.Client = { client_id: config.clientId };
  // Checks the state (this browser asked for this answer) and the issuer (RFC 9207), or throws the provider's error.
  const params = oauth.validateAuthResponse(provider, client, back, state);
  const response = await oauth.authorizationCodeGrantRequest(provider, client, oauth.None(), params, redirectUri(), verifier, {
    ...(config.resource && { additionalParameters: { resource: config.resource } }),
    ...httpOptions(new URL(config.issuer)),
  });
  const tokens = await oauth.processAuthorizationCodeResponse(provider, client, response, { requireIdToken: true });
  const claims = oauth.getValidatedIdTokenClaims(tokens)!;
  return { accessToken: tokens.access_token, name: typeof claims.name === 'string' ? claims.name : claims.sub };
}
