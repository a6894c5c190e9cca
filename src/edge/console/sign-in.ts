import { parse, type GraphQLSchema } from 'graphql';
import type { Config } from '../../config.js';
import { scopeOf } from '../../access/field-scopes.js';
import { operationShape } from '../../pipeline/operation.js';

// What the console needs to sign its operator in at the OpenID provider (CONSOLE_OIDC_CLIENT_ID): the provider, the
// console's public client there, the gateway's resource indicator and the scopes to ask for. No secret: the console
// is a public client (authorization code with PKCE), so all of it may be read by anyone who loads the page. Served
// by the console's plugin as /console/settings.json, and the provider's origin joins the page's connect-src.

export interface ConsoleProvider {
  /** The provider's issuer (OIDC_ISSUER): the console reads its discovery document. */
  issuer: string;
  /** What the sign-in button calls the provider: the issuer's host. */
  name: string;
  clientId: string;
  /** The gateway's resource indicator (OIDC_AUDIENCE), so that the provider issues a token for the gateway. */
  resource: string;
  /** `openid profile` (the person's name) and every gateway scope the console's own operations need. */
  scope: string;
}

/**
 * The scopes the root fields of `documents` declare, sorted: what the console may use, and so what it asks the
 * provider for. A scope the person does not hold is the provider's to refuse; the console offers what the token
 * carries (`viewer`), as for a key.
 */
export function scopesOfDocuments(schema: GraphQLSchema, documents: Iterable<string>): string[] {
  const scopes = new Set<string>();
  for (const text of documents) {
    for (const { field } of operationShape(schema, parse(text))?.rootFields ?? []) {
      const scope = scopeOf(field);
      if (scope) scopes.add(scope);
    }
  }
  return [...scopes].sort();
}

/** The console's sign-in at the provider; null when not configured (or the console's manifest is missing). */
export function consoleProvider(config: Pick<Config, 'OIDC_ISSUER' | 'OIDC_AUDIENCE' | 'CONSOLE_OIDC_CLIENT_ID'>, schema: GraphQLSchema, manifest: string | null): ConsoleProvider | null {
  if (!config.CONSOLE_OIDC_CLIENT_ID || !config.OIDC_ISSUER || !config.OIDC_AUDIENCE || manifest === null) return null;
  const documents = Object.values(JSON.parse(manifest) as Record<string, string>);
  return {
    issuer: config.OIDC_ISSUER,
    name: new URL(config.OIDC_ISSUER).host,
    clientId: config.CONSOLE_OIDC_CLIENT_ID,
    resource: config.OIDC_AUDIENCE,
    scope: ['openid', 'profile', ...scopesOfDocuments(schema, documents)].join(' '),
  };
}
