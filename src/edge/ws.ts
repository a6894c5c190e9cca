import type { Server } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { ExecutionArgs } from 'graphql';
import { randomUUID } from 'node:crypto';
import { GraphQLError } from 'graphql';
import { isAsyncIterable } from '@graphql-tools/utils';
import { isPrepared, type OperationRequest, type Pipeline, type PreparedOperation } from '../pipeline/pipeline.js';
import type { GraphQLParams } from '../pipeline/params.js';
import { unavailableError } from '../db/errors.js';
import { ValidationError } from '../errors.js';
import { callerHeaderMessage, repeatedNodeHeader, repeatedPayloadHeader } from '../http/caller-headers.js';
import { parseScopes } from '../identity/scopes.js';
import type { AppServices } from '../services.js';
import { urlCarriesToken, type CallerContext } from '../pipeline/access.js';
import type { CallerIdentifier, CallerIdentity, Unauthenticated } from '../access/caller.js';
import { EXPIRED_TOKEN } from '../access/credential-watch.js';
import { webSocketOutput, type SubscriberConnection } from '../runtime/subscription-registry.js';

// GraphQL over WebSocket (graphql-transport-ws) on the HTTP server's /graphql. The caller is settled at
// connection_init, from its payload or else the upgrade request's headers: the API key or bearer token (checked:
// refused -> 4403; the database or the OpenID provider unreachable -> 1013 "try again later") and X-IdpScopes (an
// unknown scope, or the header sent twice -> 4400). The credential holds for the life of the socket, not only at its
// start: each operation asks for the caller again (a key verified within AUTH_CACHE_MS, a token verified and not
// expired are at hand), and one refused then closes the socket with 4403 as a new connection would be; the socket is
// held by the credential watch (src/access/credential-watch.ts), which closes it with 4403 when its key is revoked
// (in any process) or its token expires. graphql-ws clients retry 4403, reading their connectionParams again, so a
// client that fetches a fresh token there carries on. Each operation runs on the one pipeline (src/pipeline/) with
// that caller, so the guards of every other door (scopes, rate, limits, input) guard it, and it has a request id and
// an access line.

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
  operation: OperationRequest;
  prepared: PreparedOperation;
  started: number;
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
  /** Who calls (src/access/caller.ts), as every door asks it. */
  identifier: CallerIdentifier;
  /** Whether an upgrade request may open a socket at all (Host and Origin rules, src/http/browser-policy.ts). */
  acceptUpgrade: (request: IncomingMessage) => boolean;
}

export function startWsServer({ server, pipeline, services, identifier, acceptUpgrade }: WsServerOptions) {
  const { config, metrics, log, subscriptions } = services;
  /** One access line per operation, as HTTP requests have (src/edge/plugins/use-request-id.ts), and its count. */
  const accessLine = (operation: OperationRequest, name: string, outcome: string, started: number, type = 'unknown') => {
    metrics.wsOperations.inc({ type, outcome });
    log.info({ requestId: operation.requestId, method: 'WS', path: '/graphql', operation: name, outcome, ms: Math.round((performance.now() - started) * 10) / 10, via: 'graphql-ws' }, 'request');
  };
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
  const runOperation = async (op: WsOperation) => {
    const outcome = await pipeline.execute(op.prepared, op.operation);
    const result = isAsyncIterable(outcome) ? outcome : { ...outcome, ...(outcome.errors && { errors: outcome.errors.map(withoutHttp) }) };
    accessLine(op.operation, op.prepared.label, isAsyncIterable(outcome) ? 'subscribed' : outcome.errors?.length ? 'error' : 'ok', op.started, op.prepared.type);
    return result;
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
        const fromParams = (name: string) => {
          const hit = Object.entries(params).find(([k, v]) => k.toLowerCase() === name && typeof v === 'string');
          return hit ? (hit[1] as string) : undefined;
        };
        const fromUpgrade = (name: string) => {
          const value = ctx.extra.request.headers[name];
          return Array.isArray(value) ? value[0] : value;
        };
        const header = (name: string) => fromParams(name) ?? fromUpgrade(name);
        const queryHasToken = urlCarriesToken(ctx.extra.request.url ?? '/');
        const identify = () => identifier.identify((name) => header(name) ?? (name === 'x-api-key' ? fromParams('apikey') : undefined), queryHasToken);
        let identity: CallerIdentity;
        try {
          identity = await identify();
        } catch (error) {
          // An outage is not a refusal: the client should retry, not drop its credential. No internals in the reason.
          const unavailable = unavailableError(error);
          if (!unavailable) throw error;
          ctx.extra.socket.close(WS_TRY_AGAIN_LATER, closeReason(`Service unavailable: ${unavailable.message}`));
          return false;
        }
        if (config.AUTH === 'on' && !identity.principal) {
          metrics.rejected.inc({ reason: 'unauthenticated' });
          // graphql-ws would close with a bare "Forbidden"; clients (GraphiQL) show the reason, so say what is wrong.
          ctx.extra.socket.close(WS_FORBIDDEN, closeReason(identity.unauthenticated!.message));
          return false;
        }
        // A repeated X-IdpScopes, on the upgrade request or as two keys of the payload, is refused (src/http/caller-headers.ts).
        const repeated = repeatedNodeHeader(ctx.extra.request) ?? repeatedPayloadHeader(params);
        if (repeated) {
          ctx.extra.socket.close(WS_BAD_REQUEST, closeReason(callerHeaderMessage(repeated)));
          return false;
        }
        const idpScopes = header('x-idpscopes') ?? null;
        try {
          parseScopes(idpScopes);
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          ctx.extra.socket.close(WS_BAD_REQUEST, closeReason(error.message));
          return false;
        }
        ctx.extra.caller = { ...identity, idpScopes };
        ctx.extra.identify = identify;
        const principal = identity.principal;
        if (principal) {
          const socket = ctx.extra.socket;
          const release = services.credentials.hold(principal, (why) => socket.close(WS_FORBIDDEN, refusedReason(why)));
          socket.once('close', release);
        }
        return true;
      },
      // The operation runs on the one pipeline (src/pipeline/): its document step here, so that a document that does
      // not parse or validate (or a trusted document refused) is graphql-ws's `error` message; guards, execution and
      // masking in execute/subscribe. A trusted document is named by `documentId` beside an empty `query` (the
      // protocol insists on a string there), or by Apollo's `extensions.persistedQuery`.
      onSubscribe: async (ctx, _id, payload) => {
        let caller: CallerContext;
        try {
          caller = await callerNow(ctx.extra);
        } catch (error) {
          // An outage is not a refusal: this operation fails (503's code), the socket stays.
          return [withoutHttp(refusalOf(error))];
        }
        if (config.AUTH === 'on' && !caller.principal) {
          const why = caller.unauthenticated ?? EXPIRED_TOKEN;
          metrics.rejected.inc({ reason: 'unauthenticated' });
          // After the operation's error message (graphql-ws sends it once this returns), as a new connection is refused.
          const socket = ctx.extra.socket;
          setImmediate(() => socket.close(WS_FORBIDDEN, refusedReason(why)));
          return [new GraphQLError(why.message, { extensions: { code: 'UNAUTHENTICATED' } })];
        }
        const requestId = randomUUID();
        const operation: OperationRequest = {
          method: 'WS',
          httpStatus: false,
          requestId,
          log: log.child({ requestId }),
          caller: async () => caller,
          // The socket's subscriptions share one bound on what waits for its client (src/runtime/subscription-registry.ts).
          subscriber: () => (ctx.extra.subscriber ??= subscriptions.connect(webSocketOutput(ctx.extra.socket))),
        };
        const prepared = await pipeline.prepare(payload as GraphQLParams, operation);
        if (!isPrepared(prepared)) {
          accessLine(operation, payload.operationName ?? 'anonymous', 'error', performance.now());
          return (prepared.errors ?? []).map(withoutHttp);
        }
        const args: ExecutionArgs = {
          schema: pipeline.schema,
          document: prepared.document,
          variableValues: prepared.variables,
          ...(prepared.operationName !== undefined && { operationName: prepared.operationName }),
          contextValue: { operation, prepared, started: performance.now() } satisfies WsOperation,
        };
        return args;
      },
      execute: (args) => runOperation(args.contextValue as WsOperation) as never,
      subscribe: (args) => runOperation(args.contextValue as WsOperation) as never,
    },
    wss,
  );
}
