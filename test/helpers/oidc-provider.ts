import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider';

// A real OpenID provider (oidc-provider, a certified implementation) on loopback, issuing JWT access tokens for
// resource indicators through the client credentials grant and, to browser apps (public clients), through the
// authorization code grant with PKCE after a person signs in and consents on the provider's own pages. Its keys can
// be rotated while it runs (a new provider instance behind the same port and issuer, as a provider reloading its
// configuration), so that a gateway has to find the new key by itself. Nothing of what it does is imitated: the
// tests only configure it, and write the two pages (sign-in, consent) every provider lets its operator write.

/** The gateway's resource indicator (its OIDC_AUDIENCE) and another service's. */
export const GATEWAY_RESOURCE = 'https://gateway.test/api';
export const OTHER_RESOURCE = 'https://other.test/api';

/** The namespace object the provider puts the gateway's claims in (for the JSON Pointer settings). */
export const CLAIMS_NAMESPACE = 'https://gateway.test/claims';

/** Every scope a client may ask for: the gateway's and the ESIA personal-data ones. */
const RESOURCE_SCOPES =
  'queues:read queues:write tasks:read tasks:write scheduler:read scheduler:write identity:read notifications:send notifications:read metrics:read fullname birthdate gender birthplace citizenship snils inn id_doc usr_org openid';

/** A client of the provider, and the claims the provider adds to its tokens (configuration, as an operator sets it). */
export interface TestClient {
  id: string;
  /** The person the client acts for: `person_oid` (top level) and `person` in the namespace. */
  person?: string;
  /** The notification system it is bound to (`system` in the namespace). */
  system?: string;
  /** Scopes put in the namespace as an array (`scopes`), besides the `scope` claim the grant makes. */
  namespacedScopes?: string[];
  /** Personal-data scopes in the namespace (`idp`). */
  namespacedIdp?: string[];
  /** Lifetime of its access tokens in seconds (default 300). */
  ttl?: number;
  /**
   * Where a browser app gets its code back: makes the client a public one (no secret, as an app in a browser cannot
   * keep one) that signs its users in with the authorization code grant and PKCE.
   */
  redirectUris?: string[];
}

/** A person who signs in on the provider's page. */
export interface TestAccount {
  login: string;
  password: string;
  /** The `name` claim of the ID token (scope `profile`). */
  name: string;
  /**
   * The gateway scopes this person holds (a provider's roles): consent grants only these of what an app asks for
   * and rejects the rest, so the token carries no more. Absent: whatever the app asks for.
   */
  scopes?: string[];
}

export interface ProviderOptions {
  /** Who may sign in (authorization code clients). */
  accounts?: TestAccount[];
  /** A fixed port (the tutorial's provider); a free one by default. */
  port?: number;
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  privateJwk: JWK;
}

export async function signingKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, privateKey, publicJwk, privateJwk };
}

export interface TestProvider {
  issuer: string;
  /** Publishes `keys` from now on; the first signs new tokens. */
  rotate(keys: SigningKey[]): void;
  /**
   * Registers one more client, as an operator adds one while the provider runs: for an app whose address is known
   * only once it listens (a gateway's console on a free port). Sessions and grants made so far are forgotten.
   */
  addClient(client: TestClient): void;
  /** An access token of the client credentials grant. */
  token(clientId: string, scope: string, resource?: string): Promise<string>;
  /** How many times the JWKS has been read (answered or failed). */
  jwksReads(): number;
  /** How many times the discovery document has been read. */
  discoveryReads(): number;
  /** From now on the JWKS endpoint answers this status (a provider whose key set fails); null: it answers again. */
  failJwks(status: number | null): void;
  /** Stops listening (connections are refused), keeping the port and issuer for `resume`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

const SECRET = 'a-client-secret-for-tests-only-0123456789';

/** The provider's store, in memory (what its own development adapter does, without its start-up warning). */
function memoryAdapter(): new (name: string) => Adapter {
  const store = new Map<string, AdapterPayload>();
  return class implements Adapter {
    constructor(private readonly name: string) {}
    private key(id: string) {
      return `${this.name}:${id}`;
    }
    async upsert(id: string, payload: AdapterPayload) {
      store.set(this.key(id), payload);
    }
    async find(id: string) {
      return store.get(this.key(id));
    }
    async findByUserCode() {
      return undefined;
    }
    /** Sessions are also found by their uid (a sign-in in progress names its session so). */
    async findByUid(uid: string) {
      for (const [key, payload] of store) if (key.startsWith(`${this.name}:`) && payload.uid === uid) return payload;
      return undefined;
    }
    async consume(id: string) {
      const found = store.get(this.key(id));
      if (found) found.consumed = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string) {
      store.delete(this.key(id));
    }
    async revokeByGrantId() {}
  };
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The provider's sign-in and consent pages (oidc-provider leaves them to its operator): a form for the login and
 * password, then one listing the scopes the app asks for with an Allow button. Each posts back to its own address.
 */
async function interaction(provider: Provider, accounts: TestAccount[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { uid, prompt, params, session, grantId } = await provider.interactionDetails(req, res);
  let body = '';
  if (req.method === 'POST') for await (const chunk of req) body += String(chunk);
  const form = new URLSearchParams(body);
  const send = (status: number, html: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
  };
  const action = `/interaction/${uid}`;
  if (prompt.name === 'login') {
    if (req.method === 'POST') {
      const account = accounts.find((a) => a.login === form.get('login') && a.password === form.get('password'));
      if (account) return provider.interactionFinished(req, res, { login: { accountId: account.login } }, { mergeWithLastSubmission: false });
    }
    const refused = req.method === 'POST' ? '<p role="alert">Wrong login or password.</p>' : '';
    return send(req.method === 'POST' ? 401 : 200, page('Sign in', `${refused}<form method="post" action="${action}">
      <label>Login <input name="login" autocomplete="username" required></label>
      <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
      <button>Sign in</button></form>`));
  }
  if (prompt.name === 'consent') {
    const details = prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (req.method === 'POST') {
      const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId: session!.accountId, clientId: String(params.client_id) });
      if (details.missingOIDCScope) grant!.addOIDCScope(details.missingOIDCScope);
      const holds = accounts.find((a) => a.login === session!.accountId)?.scopes;
      for (const [resource, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
        const [granted, rejected] = holds ? [scopes.filter((s) => holds.includes(s)), scopes.filter((s) => !holds.includes(s))] : [scopes, []];
        if (granted.length) grant!.addResourceScope(resource, granted);
        if (rejected.length) grant!.rejectResourceScope(resource, rejected);
      }
      return provider.interactionFinished(req, res, { consent: { grantId: await grant!.save() } }, { mergeWithLastSubmission: true });
    }
    const asked = new Set([...(details.missingOIDCScope ?? []), ...Object.values(details.missingResourceScopes ?? {}).flat()]);
    return send(200, page('Allow access', `<p>${escape(String(params.client_id))} asks for:</p>
      <ul>${[...asked].map((s) => `<li>${escape(s)}</li>`).join('')}</ul>
      <form method="post" action="${action}"><button>Allow</button></form>`));
  }
  send(501, page('Not supported', escape(prompt.name)));
}

export async function startTestProvider(clients: TestClient[], keys: SigningKey[], options: ProviderOptions = {}): Promise<TestProvider> {
  let current: Provider | undefined;
  let reads = 0;
  let discoveries = 0;
  let jwksFailure: number | null = null;
  const accounts = options.accounts ?? [];
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/.well-known/openid-configuration')) discoveries++;
    if (req.url?.startsWith('/jwks')) {
      reads++;
      if (jwksFailure !== null) return void res.writeHead(jwksFailure, { 'content-type': 'text/plain' }).end('the key set is not available');
    }
    if (req.url?.startsWith('/interaction/')) {
      // An expired or unknown interaction: the provider's error and its description, as its own pages would say.
      interaction(current!, accounts, req, res).catch((error: Error & { error_description?: string }) => {
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' }).end([error.message, error.error_description].filter(Boolean).join(': '));
      });
      return;
    }
    void current!.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  clients = [...clients];
  const byId = new Map(clients.map((c) => [c.id, c]));
  let published = keys;

  const make = () =>
    new Provider(issuer, {
      adapter: memoryAdapter(),
      ttl: {
        ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 300,
        AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 300,
        AuthorizationCode: 60,
        IdToken: 300,
        Interaction: 600,
        Session: 3600,
        Grant: 3600,
      },
      clients: clients.map((c) =>
        c.redirectUris
          ? { client_id: c.id, token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: c.redirectUris }
          : { client_id: c.id, client_secret: SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] },
      ),
      jwks: { keys: published.map((k) => k.privateJwk) },
      // The person's claims (`name`) in the ID token itself, as most providers put them: an app whose access token
      // is for the gateway cannot read the provider's userinfo with it.
      conformIdTokenClaims: false,
      claims: { openid: ['sub'], profile: ['name'] },
      findAccount: (_ctx, sub) => {
        const account = accounts.find((a) => a.login === sub);
        return account && { accountId: sub, claims: () => ({ sub, name: account.name }) };
      },
      // The token endpoint answers a browser app's page (CORS) from the origins of its redirect URIs, as
      // oidc-provider's default does, stated here rather than left to a default that logs a reminder.
      clientBasedCORS: (_ctx, origin, client) => client.clientAuthMethod === 'none' && (client.redirectUris ?? []).some((uri) => new URL(uri).origin === origin),
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => GATEWAY_RESOURCE,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource, client) => ({
            scope: RESOURCE_SCOPES,
            audience: resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: byId.get(client.clientId)?.ttl ?? 300,
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
      extraTokenClaims: (_ctx, token) => {
        const client = byId.get(token.clientId ?? '');
        if (!client) return undefined;
        return {
          ...(client.person && { person_oid: client.person }),
          [CLAIMS_NAMESPACE]: {
            ...(client.person && { person: client.person }),
            ...(client.system && { system: client.system }),
            ...(client.namespacedScopes && { scopes: client.namespacedScopes }),
            ...(client.namespacedIdp && { idp: client.namespacedIdp }),
          },
        };
      },
    });
  current = make();

  return {
    issuer,
    rotate(next) {
      published = next;
      current = make();
    },
    addClient(client) {
      clients.push(client);
      byId.set(client.id, client);
      current = make();
    },
    async token(clientId, scope, resource = GATEWAY_RESOURCE) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${SECRET}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`the provider refused a token to ${clientId}: ${body.error} ${body.error_description}`);
      return body.access_token;
    },
    jwksReads: () => reads,
    discoveryReads: () => discoveries,
    failJwks: (status) => void (jwksFailure = status),
    pause: stop,
    resume: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}
