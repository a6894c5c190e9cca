import type { Server } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { ExecutionArgs } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import { presentedKey, type Principal } from '../access/principal.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { ValidationError } from '../errors.js';
import { callerHeaderMessage, repeatedNodeHeader, repeatedPayloadHeader } from '../http/caller-headers.js';
import { parseScopes } from '../identity/scopes.js';
import type { AppServices } from '../services.js';
import { webSocketOutput, type SubscriberConnection } from '../runtime/subscription-registry.js';
import { unauthenticatedMessage } from './plugins/use-access-control.js';

// GraphQL over WebSocket (graphql-transport-ws) on the HTTP server's /graphql. The caller is settled once, at
// connection_init, from its payload or else the upgrade request's headers: the API key (checked: refused -> 4403;
// the database unreachable -> 1013 "try again later") and X-IdpScopes (an unknown scope, or the header sent twice ->
// 4400). Each operation then runs through Yoga's envelop with that caller, so the plugins that guard HTTP (scopes,
// rate, limits, input) guard it.

/** WebSocket close code 1013 "Try Again Later" (RFC 6455 registry). */
const WS_TRY_AGAIN_LATER = 1013;
/** graphql-ws's "Bad Request" close code. */
const WS_BAD_REQUEST = 4400;
/** graphql-ws's "Forbidden" close code. */
const WS_FORBIDDEN = 4403;

interface Caller {
  principal: Principal | null;
  idpScopes: string | null;
}

type Extra = { socket: WebSocket; request: IncomingMessage; caller?: Caller; subscriber?: SubscriberConnection };

export interface WsServerOptions {
  server: Server;
  yoga: YogaServerInstance<Record<string, unknown>, AppServices>;
  services: AppServices;
  /** Whether an upgrade request may open a socket at all (Host and Origin rules, src/http/browser-policy.ts). */
  acceptUpgrade: (request: IncomingMessage) => boolean;
}

export function startWsServer({ server, yoga, services, acceptUpgrade }: WsServerOptions) {
  const { config, keys, metrics, subscriptions } = services;
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
        ctx.extra.caller = { principal, idpScopes };
        return true;
      },
      execute: (args) => (args.rootValue as { execute: (a: ExecutionArgs) => unknown }).execute(args) as never,
      subscribe: (args) => (args.rootValue as { subscribe: (a: ExecutionArgs) => unknown }).subscribe(args) as never,
      onSubscribe: async (ctx, _id, params) => {
        const caller = ctx.extra.caller ?? { principal: null, idpScopes: undefined };
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
          principal: caller.principal,
          idpScopes: caller.idpScopes,
          // The socket's subscriptions share one bound on what waits for its client (src/runtime/subscription-registry.ts).
          subscriber: (ctx.extra.subscriber ??= subscriptions.connect(webSocketOutput(ctx.extra.socket))),
        });
        const args: ExecutionArgs = {
          schema,
          operationName: params.operationName ?? null,
          document: parse(params.query),
          variableValues: params.variables ?? null,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        };
        const errors = validate(args.schema, args.document);
        if (errors.length) return errors;
        return args;
      },
    },
    wss,
  );
}
