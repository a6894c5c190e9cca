import type { Server } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { ExecutionArgs, ExecutionResult } from 'graphql';
import { GraphQLError } from 'graphql';
import { isAsyncIterable } from '@graphql-tools/utils';
import type { OperationOutcome, Pipeline, PreparedOperation } from '../pipeline/pipeline.js';
import type { GraphQLParams } from '../pipeline/params.js';
import { unavailableError } from '../db/errors.js';
import { ValidationError } from '../errors.js';
import { callerHeaderMessage, repeatedNodeHeader, repeatedPayloadHeader } from '../http/caller-headers.js';
import { parseScopes } from '../identity/scopes.js';
import type { AppServices } from '../services.js';
import { urlCarriesToken } from '../pipeline/access.js';
import type { Observer } from '../pipeline/observe.js';
import { REQUEST_ID_HEADER, type CallerContext, type Digest, type RequestContext, type RequestHeaders } from '../pipeline/request-context.js';
import type { CallerIdentifier, CallerIdentity, Unauthenticated } from '../access/caller.js';
import { EXPIRED_TOKEN } from '../access/credential-watch.js';
import { webSocketOutput, type SubscriberConnection } from '../events/subscription-registry.js';

// GraphQL over WebSocket (graphql-transport-ws) on the HTTP server's /graphql. The caller is settled at
// connection_init, from its payload or else the upgrade request's headers: the API key or bearer token (checked:
// refused -> 4403; the database or the OpenID provider unreachable -> 1013 "try again later") and X-IdpScopes (an
// unknown scope, or the header sent twice -> 4400). The credential holds for the life of the socket, not only at its
// start: each operation asks for the caller again (a key verified within AUTH_CACHE_MS, a token verified and not
// expired are at hand), and one refused then closes the socket with 4403 as a new connection would be; the socket is
// held by the credential watch (src/access/credential-watch.ts), which closes it with 4403 when its key is revoked
// (in any process) or its token expires. graphql-ws clients retry 4403, reading their connectionParams again, so a
// client that fetches a fresh token there carries on. The connection is digested once from its upgrade request and
// payload (its request id is the upgrade's X-Request-Id, or a new one); each operation is a child of it
// (`<connection id>:<n>`) and runs on the one pipeline (src/pipeline/) with the caller as it stands, so the guards of
// every other door (scopes, rate, limits, input) guard it, and it has an access line.

/** WebSocket close code 1013 "Try Again Later" (RFC 6455 registry). */
const WS_TRY_AGAIN_LATER = 1013;
/** graphql-ws's "Bad Request" close code. */
const WS_BAD_REQUEST = 4400;
/** graphql-ws's "Forbidden" close code. */
const WS_FORBIDDEN = 4403;

/** The reason a socket outliving its token is closed with. */
export const TOKEN_EXPIRED_REASON = 'Forbidden: the token expired; connect again with a new one';

type Extra = {
  socket: WebSocket;
  request: IncomingMessage;
  /** The connection's context, digested at connection_init. */
  context?: RequestContext;
  /** Operations subscribed so far (each operation's id is the connection's with its number). */
  operations?: number;
  caller?: CallerContext;
  /** The caller as its credential stands now (asked again for every operation). */
  identify?: () => CallerIdentity | Promise<CallerIdentity>;
  subscriber?: SubscriberConnection;
};

/** The close reason of a socket whose credential stopped being valid: the words a new connection would be refused with. */
function refusedReason(why: Unauthenticated): string {
  return why === EXPIRED_TOKEN ? TOKEN_EXPIRED_REASON : closeReason(why.message);
}

interface WsOperation {
  context: RequestContext;
  prepared: PreparedOperation;
  outcome: OperationOutcome;
}

/** A close frame's reason holds at most 123 bytes (RFC 6455 5.5): longer ones are cut, on a character boundary. */
function closeReason(text: string): string {
  let reason = text;
  while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1);
  return reason;
}

/** An error as a socket carries it: its HTTP status is no part of a message. */
function withoutHttp(error: GraphQLError): GraphQLError {
  if (!error.extensions || !('http' in error.extensions)) return error;
  const { http: _http, ...extensions } = error.extensions;
  return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, originalError: error.originalError, extensions });
}

export interface WsServerOptions {
  server: Server;
  pipeline: Pipeline;
  services: AppServices;
  /** Who calls (src/access/caller.ts), as every door asks it: again for each operation. */
  identifier: CallerIdentifier;
  digest: Digest;
  observer: Observer;
  /** Whether an upgrade request may open a socket at all (Host and Origin rules, src/http/browser-policy.ts). */
  acceptUpgrade: (request: IncomingMessage) => boolean;
}

export function startWsServer({ server, pipeline, services, identifier, digest, observer, acceptUpgrade }: WsServerOptions) {
  const { config, subscriptions } = services;
  const anonymous: CallerContext = { principal: null, callerKind: 'anonymous', unauthenticated: null, idpScopes: undefined };
  /**
   * The socket's caller as its credential stands now: the same principal while the key or token still holds, none
   * (and why) once the key is revoked or the token expired. A timer late under load must not let an operation in after
   * the token expired, so expiry is compared here too.
   */
  const callerNow = async (extra: Extra): Promise<CallerContext> => {
    const opened = extra.caller;
    if (!opened || !extra.identify) return opened ?? anonymous;
    const expiresAt = opened.principal?.expiresAt;
    if (expiresAt != null && expiresAt <= Date.now()) return { ...anonymous, idpScopes: opened.idpScopes, unauthenticated: EXPIRED_TOKEN };
    const now = await extra.identify();
    return { ...now, idpScopes: opened.idpScopes };
  };
  /** The error an operation gets when its caller cannot be checked now (the database or the provider away). */
  const refusalOf = (error: unknown): GraphQLError => {
    const unavailable = unavailableError(error);
    if (!unavailable) throw error;
    return pipeline.mask(unavailable);
  };
  const answerOf = ({ context, prepared, outcome }: WsOperation): OperationOutcome => {
    observer.operationAnswered(context, prepared.label, isAsyncIterable(outcome) ? 'subscribed' : outcome.errors?.length ? 'error' : 'ok', prepared.type);
    return isAsyncIterable(outcome) ? outcome : ({ ...outcome, ...(outcome.errors && { errors: outcome.errors.map(withoutHttp) }) } satisfies ExecutionResult);
  };
  const wss = new WebSocketServer({
    server,
    path: '/graphql',
    // One message is at most what one HTTP body may be (MAX_BODY_BYTES); a larger one closes the socket (1009).
    maxPayload: config.MAX_BODY_BYTES,
    verifyClient: ({ req }: { req: IncomingMessage }) => acceptUpgrade(req),
  });
  return useServer<Record<string, unknown>, Extra>(
    {
      connectionInitWaitTimeout: config.GRAPHQL_WS_INIT_TIMEOUT_MS,
      onConnect: async (ctx) => {
        const params = (ctx.connectionParams ?? {}) as Record<string, unknown>;
        const upgrade = ctx.extra.request;
        const context = digest({
          requestId: firstOf(upgrade.headers[REQUEST_ID_HEADER]),
          method: 'WS',
          path: '/graphql',
          transport: 'ws',
          headers: connectionHeaders(params, upgrade),
          // A repeated X-IdpScopes, on the upgrade request or as two keys of the payload (src/http/caller-headers.ts).
          callerHeaderIssue: repeatedNodeHeader(upgrade) ?? repeatedPayloadHeader(params),
          urlCarriesToken: urlCarriesToken(upgrade.url ?? '/'),
        });
        let refused;
        try {
          refused = await context.admission();
        } catch (error) {
          // An outage is not a refusal: the client should retry, not drop its credential. No internals in the reason.
          const unavailable = unavailableError(error);
          if (!unavailable) throw error;
          ctx.extra.socket.close(WS_TRY_AGAIN_LATER, closeReason(`Service unavailable: ${unavailable.message}`));
          return false;
        }
        // graphql-ws would close with a bare "Forbidden"; clients (GraphiQL) show the reason, so say what is wrong.
        if (refused?.kind === 'unauthenticated') {
          ctx.extra.socket.close(WS_FORBIDDEN, closeReason(refused.why.message));
          return false;
        }
        if (refused) {
          ctx.extra.socket.close(WS_BAD_REQUEST, closeReason(callerHeaderMessage(refused.issue)));
          return false;
        }
        const caller = await context.caller();
        const idpScopes = caller.idpScopes ?? null;
        try {
          parseScopes(idpScopes);
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          ctx.extra.socket.close(WS_BAD_REQUEST, closeReason(error.message));
          return false;
        }
        const identify = () => identifier.identify((name) => context.headers.get(name), urlCarriesToken(upgrade.url ?? '/'));
        ctx.extra.context = context;
        ctx.extra.caller = { ...caller, idpScopes };
        ctx.extra.identify = identify;
        const principal = caller.principal;
        if (principal) {
          const socket = ctx.extra.socket;
          const release = services.credentials.hold(principal, (why) => socket.close(WS_FORBIDDEN, refusedReason(why)));
          socket.once('close', release);
        }
        return true;
      },
      // The operation runs on the one pipeline (src/pipeline/) here, whole: a refused caller or a document that does not
      // parse or validate (or a trusted document refused) is graphql-ws's `error` message; what ran is handed on by
      // execute/subscribe. A trusted document is named by `documentId` beside an empty `query` (the
      // protocol insists on a string there), or by Apollo's `extensions.persistedQuery`.
      onSubscribe: async (ctx, _id, payload) => {
        let caller: CallerContext;
        try {
          caller = await callerNow(ctx.extra);
        } catch (error) {
          // An outage is not a refusal: this operation fails (503's code), the socket stays.
          return [withoutHttp(refusalOf(error))];
        }
        const connection = ctx.extra.context!;
        const context = digest({
          id: `${connection.id}:${(ctx.extra.operations = (ctx.extra.operations ?? 0) + 1)}`,
          method: 'WS',
          path: connection.path,
          transport: 'ws',
          headers: connection.headers,
          caller,
          // The socket's subscriptions share one bound on what waits for its client (src/events/subscription-registry.ts).
          subscriber: () => (ctx.extra.subscriber ??= subscriptions.connect(webSocketOutput(ctx.extra.socket))),
        });
        const handled = await pipeline.handle(payload as GraphQLParams, context);
        if (handled.stage === 'refused') {
          const refused = await context.admission();
          // After the operation's error message (graphql-ws sends it once this returns), as a new connection is refused.
          const socket = ctx.extra.socket;
          if (refused?.kind === 'unauthenticated') setImmediate(() => socket.close(WS_FORBIDDEN, refusedReason(refused.why)));
          observer.operationAnswered(context, payload.operationName ?? 'anonymous', 'error');
          return (handled.result.errors ?? []).map(withoutHttp);
        }
        if (handled.stage === 'invalid' || !handled.prepared) {
          observer.operationAnswered(context, payload.operationName ?? 'anonymous', 'error');
          const errors = handled.stage === 'invalid' ? handled.result.errors : isAsyncIterable(handled.outcome) ? undefined : handled.outcome.errors;
          return (errors ?? []).map(withoutHttp);
        }
        const { prepared, outcome } = handled;
        const args: ExecutionArgs = {
          schema: pipeline.schema,
          document: prepared.document,
          variableValues: prepared.variables,
          ...(prepared.operationName !== undefined && { operationName: prepared.operationName }),
          // Run already (by `handle`): graphql-ws's execute and subscribe below hand on what it made.
          contextValue: { context, prepared, outcome } satisfies WsOperation,
        };
        return args;
      },
      execute: (args) => answerOf(args.contextValue as WsOperation) as never,
      subscribe: (args) => answerOf(args.contextValue as WsOperation) as never,
    },
    wss,
  );
}

const firstOf = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/**
 * A connection's headers: the connection_init payload's (any case; `apiKey` for X-Api-Key, as some clients send it),
 * else the upgrade request's.
 */
function connectionHeaders(params: Record<string, unknown>, upgrade: IncomingMessage): RequestHeaders {
  const fromParams = (name: string) => {
    const hit = Object.entries(params).find(([k, v]) => k.toLowerCase() === name && typeof v === 'string');
    return hit ? (hit[1] as string) : undefined;
  };
  const get = (name: string): string | null => fromParams(name) ?? firstOf(upgrade.headers[name]) ?? (name === 'x-api-key' ? fromParams('apikey') : undefined) ?? null;
  return {
    get,
    *entries() {
      const names = new Set([...Object.keys(upgrade.headers), ...Object.keys(params).map((k) => k.toLowerCase())]);
      for (const name of names) {
        const value = get(name);
        if (value !== null) yield [name, value];
      }
    },
  };
}
