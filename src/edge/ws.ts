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
import { presentedKey, type Principal } from '../access/principal.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { ValidationError } from '../errors.js';
import { callerHeaderMessage, repeatedNodeHeader, repeatedPayloadHeader } from '../http/caller-headers.js';
import { parseScopes } from '../identity/scopes.js';
import type { AppServices } from '../services.js';
import { unauthenticatedMessage } from '../pipeline/access.js';
import { webSocketOutput, type SubscriberConnection } from '../runtime/subscription-registry.js';

// GraphQL over WebSocket (graphql-transport-ws) on the HTTP server's /graphql. The caller is settled once, at
// connection_init, from its payload or else the upgrade request's headers: the API key (checked: refused -> 4403;
// the database unreachable -> 1013 "try again later") and X-IdpScopes (an unknown scope, or the header sent twice ->
// 4400). Each operation then runs on the one pipeline (src/pipeline/) with that caller, so the guards of every other
// door (scopes, rate, limits, input) guard it, and it has a request id and an access line.

/** WebSocket close code 1013 "Try Again Later" (RFC 6455 registry). */
const WS_TRY_AGAIN_LATER = 1013;
/** graphql-ws's "Bad Request" close code. */
const WS_BAD_REQUEST = 4400;
/** graphql-ws's "Forbidden" close code. */
const WS_FORBIDDEN = 4403;

interface Caller {
  principal: Principal | null;
  presentedKey: boolean;
  idpScopes: string | null | undefined;
}

type Extra = { socket: WebSocket; request: IncomingMessage; caller?: Caller; subscriber?: SubscriberConnection };

interface WsOperation {
  operation: OperationRequest;
  prepared: PreparedOperation;
  started: number;
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
  /** Whether an upgrade request may open a socket at all (Host and Origin rules, src/http/browser-policy.ts). */
  acceptUpgrade: (request: IncomingMessage) => boolean;
}

export function startWsServer({ server, pipeline, services, acceptUpgrade }: WsServerOptions) {
  const { config, keys, metrics, log, subscriptions } = services;
  /** One access line per operation, as HTTP requests have (src/edge/plugins/use-request-id.ts), and its count. */
  const accessLine = (operation: OperationRequest, name: string, outcome: string, started: number, type = 'unknown') => {
    metrics.wsOperations.inc({ type, outcome });
    log.info({ requestId: operation.requestId, method: 'WS', path: '/graphql', operation: name, outcome, ms: Math.round((performance.now() - started) * 10) / 10, via: 'graphql-ws' }, 'request');
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
        const key = presentedKey((name) => header(name) ?? (name === 'x-api-key' ? fromParams('apikey') : undefined));
        let principal: Principal | null;
        try {
          principal = key ? await keys.verify(key) : null;
        } catch (error) {
          // An outage is not a refusal: the client should retry, not drop its key. No internals in the reason.
          if (!isDatabaseUnavailable(error)) throw error;
          ctx.extra.socket.close(WS_TRY_AGAIN_LATER, 'Service unavailable: the database cannot be reached; retry shortly');
          return false;
        }
        if (config.AUTH === 'on' && !principal) {
          metrics.rejected.inc({ reason: 'unauthenticated' });
          // graphql-ws would close with a bare "Forbidden"; clients (GraphiQL) show the reason, so say what is wrong.
          ctx.extra.socket.close(WS_FORBIDDEN, unauthenticatedMessage(key !== null));
          return false;
        }
        // A repeated X-IdpScopes, on the upgrade request or as two keys of the payload, is refused (src/http/caller-headers.ts).
        const repeated = repeatedNodeHeader(ctx.extra.request) ?? repeatedPayloadHeader(params);
        if (repeated) {
          ctx.extra.socket.close(WS_BAD_REQUEST, callerHeaderMessage(repeated).slice(0, 120));
          return false;
        }
        const idpScopes = header('x-idpscopes') ?? null;
        try {
          parseScopes(idpScopes);
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          ctx.extra.socket.close(WS_BAD_REQUEST, error.message.slice(0, 120));
          return false;
        }
        ctx.extra.caller = { principal, presentedKey: key !== null, idpScopes };
        return true;
      },
      // The operation runs on the one pipeline (src/pipeline/): its document step here, so that a document that does
      // not parse or validate is graphql-ws's `error` message; guards, execution and masking in execute/subscribe.
      onSubscribe: (ctx, _id, payload) => {
        const caller: Caller = ctx.extra.caller ?? { principal: null, presentedKey: false, idpScopes: undefined };
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
        const prepared = pipeline.prepare(payload as GraphQLParams, operation);
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
