import type { Principal } from '../access/principal.js';
import type { AppServices } from '../services.js';

export type { AppServices };

/** Per request, the plugins add who calls (src/pipeline/access.ts) and the request id; Yoga adds the HTTP request (absent over graphql-ws). */
export interface GraphQLContext extends AppServices {
  /** The API key's principal; null when no valid key was sent (possible only with AUTH=off). */
  principal?: Principal | null;
  requestId?: string;
  request?: Request;
  /**
   * X-IdpScopes as the caller sent it: the HTTP request's header, or the graphql-ws connection's (connection_init
   * payload, else upgrade header). null: not sent (no restriction); undefined: not known, so identity data is refused.
   */
  idpScopes?: string | null;
}
