import * as oauth from 'oauth4webapi';
import type { Provider } from './settings';

// Signing in at the OpenID provider with the authorization code grant and PKCE (RFC 7636), through oauth4webapi, as
// examples/front-end does: the browser goes to the provider's page (the console never sees a password) and comes
// back to /console with a one-time code that only this tab can trade for tokens, since only it holds the verifier
// whose hash it sent first. The access token is kept in memory only: a reload signs in again (one redirect, without
// a password while the provider's session lasts). Loaded only when the operator signs in this way.

/** The verifier, state and page kept across the trip to the provider: the page is left, so memory cannot hold them. */
const PENDING = 'gateway-console-sign-in';

export interface ProviderSession {
  accessToken: string;
  /** The person's name from the ID token (or its subject). */
  name: string;
  /** When the access token stops being valid (ms since the epoch); null when the provider did not say. */
  expiresAt: number | null;
}

/** Where the provider sends the browser back: the console's page, as registered for its client. */
const redirectUri = () => `${location.origin}/console`;

/** A plain-http provider is allowed on this machine only, as the gateway allows for OIDC_ISSUER. */
function httpOptions(issuer: URL) {
  const loopback = issuer.hostname === 'localhost' || issuer.hostname === '[::1]' || issuer.hostname.startsWith('127.');
  return { [oauth.allowInsecureRequests]: issuer.protocol === 'http:' && loopback };
}

async function discover(provider: Provider): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(provider.issuer);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...httpOptions(issuer) }));
}

/** Leaves for the provider's sign-in page; the console's page (its fragment) is opened again on return. */
export async function startSignIn(provider: Provider): Promise<void> {
  const server = await discover(provider);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, page: location.hash }));
  const url = new URL(server.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: provider.clientId,
    redirect_uri: redirectUri(),
    response_type: 'code',
    scope: provider.scope,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    resource: provider.resource,
  }).toString();
  location.assign(url);
}

/** Back from the provider: trades the code for tokens, or throws the reason it cannot (the provider's own words). */
export async function finishSignIn(provider: Provider): Promise<ProviderSession> {
  const back = new URL(location.href);
  const pending = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  const { verifier, state, page } = pending ? (JSON.parse(pending) as { verifier: string; state: string; page: string }) : { verifier: '', state: '', page: '' };
  // The code is single-use and worthless without the verifier, but it has no business in the address bar or history.
  history.replaceState(null, '', `${redirectUri()}${page}`);
  if (!pending) throw new Error('This sign-in was not started in this tab (or was finished already): sign in again.');
  const server = await discover(provider);
  const client: oauth.Client = { client_id: provider.clientId };
  try {
    // Checks the state (this tab asked for this answer) and the issuer (RFC 9207), or throws the provider's error.
    const params = oauth.validateAuthResponse(server, client, back, state);
    const response = await oauth.authorizationCodeGrantRequest(server, client, oauth.None(), params, redirectUri(), verifier, {
      additionalParameters: { resource: provider.resource },
      ...httpOptions(new URL(provider.issuer)),
    });
    const tokens = await oauth.processAuthorizationCodeResponse(server, client, response, { requireIdToken: true });
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    return {
      accessToken: tokens.access_token,
      name: typeof claims.name === 'string' ? claims.name : claims.sub,
      expiresAt: typeof tokens.expires_in === 'number' ? Date.now() + tokens.expires_in * 1000 : null,
    };
  } catch (error) {
    throw new Error(`The sign-in at ${provider.name} failed: ${reasonOf(error)}`);
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof oauth.AuthorizationResponseError || error instanceof oauth.ResponseBodyError) {
    return error.error_description ?? error.error;
  }
  return error instanceof Error ? error.message : String(error);
}
