import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import Provider, { type Adapter, type AdapterPayload } from 'oidc-provider';

// A real OpenID provider (oidc-provider, a certified implementation) on loopback, issuing JWT access tokens for
// resource indicators through the client credentials grant. Its keys can be rotated while it runs (a new provider
// instance behind the same port and issuer, as a provider reloading its configuration), so that a gateway has to
// find the new key by itself. Nothing of what it does is imitated: the tests only configure it.

/** The gateway's resource indicator (its OIDC_AUDIENCE) and another service's. */
export const GATEWAY_RESOURCE = 'https://gateway.test/api';
export const OTHER_RESOURCE = 'https://other.test/api';

/** The namespace object the provider puts the gateway's claims in (for the JSON Pointer settings). */
export const CLAIMS_NAMESPACE = 'https://gateway.test/claims';

/** Every scope a client may ask for: the gateway's and the ESIA personal-data ones. */
const RESOURCE_SCOPES =
  'queues:read queues:write identity:read notifications:send notifications:read metrics:read fullname birthdate gender birthplace citizenship snils inn id_doc usr_org openid';

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
  /** An access token of the client credentials grant. */
  token(clientId: string, scope: string, resource?: string): Promise<string>;
  /** How many times the JWKS has been read. */
  jwksReads(): number;
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
    async findByUid() {
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

export async function startTestProvider(clients: TestClient[], keys: SigningKey[]): Promise<TestProvider> {
  let current: Provider | undefined;
  let reads = 0;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/jwks')) reads++;
    void current!.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const byId = new Map(clients.map((c) => [c.id, c]));

  const make = (published: SigningKey[]) =>
    new Provider(issuer, {
      adapter: memoryAdapter(),
      ttl: { ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 300 },
      clients: clients.map((c) => ({ client_id: c.id, client_secret: SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] })),
      jwks: { keys: published.map((k) => k.privateJwk) },
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
  current = make(keys);

  return {
    issuer,
    rotate(next) {
      current = make(next);
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
    pause: stop,
    resume: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}
