import type { Principal } from '../access/principal.js';
import type { CallerKind } from '../kit/trusted-documents-policy.js';
import type { AppServices } from '../services.js';

export type { AppServices };

/** Per operation, the pipeline adds who calls, the request id, the request's headers and how its answer travels (src/pipeline/pipeline.ts). */
export interface GraphQLContext extends AppServices {
  /** The caller's principal (API key or bearer token); null when no valid one was sent (possible only with AUTH=off). */
  principal?: Principal | null;
  /** How the caller proved who it is: 'key', 'token', or 'anonymous' (none; AUTH=off). */
  callerKind?: CallerKind;
  requestId?: string;
  /** The request's headers (Idempotency-Key); over graphql-ws, the upgrade request's and the connection_init payload's. */
  headers?: { get(name: string): string | null };
  /** Whether an error's HTTP status reaches the client (plain HTTP; not SSE, not graphql-ws). */
  httpStatus?: boolean;
  /**
   * X-IdpScopes as the caller sent it: the HTTP request's header, or the graphql-ws connection's (connection_init
   * payload, else upgrade header). null: not sent (no restriction); undefined: not known, so identity data is refused.
   */
  idpScopes?: string | null;
}
