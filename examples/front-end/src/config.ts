// Where this deployment's gateway and OpenID provider are. Read at start from config.json beside index.html rather
// than built in, so that one build (and its one manifest of trusted documents) serves every deployment.

export interface AppConfig {
  /** The gateway's origin (`https://gateway.example`): GraphQL at /graphql, over HTTP and graphql-ws. */
  gateway: string;
  /** The provider's issuer, exactly as its discovery document names it (the gateway's OIDC_ISSUER). */
  issuer: string;
  /** This app's client id at the provider: a public client (no secret) allowed the authorization code grant. */
  clientId: string;
  /** The gateway's resource indicator (its OIDC_AUDIENCE), for providers that issue tokens per resource. */
  resource?: string;
}

export async function loadConfig(): Promise<AppConfig> {
  const res = await fetch(new URL('config.json', document.baseURI));
  if (!res.ok) throw new Error(`config.json: ${res.status} ${res.statusText}`);
  return (await res.json()) as AppConfig;
}
