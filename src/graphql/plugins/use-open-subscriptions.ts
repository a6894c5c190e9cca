import type { ServerResponse } from 'node:http';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GatewayMetrics } from '../../runtime/metrics.js';
import { eventStreamOutput, type SubscriberConnection, type SubscriptionRegistry } from '../../runtime/subscription-registry.js';
import type { GraphQLContext } from '../context.js';
import { carriesHttpStatus, operationShape, refusal } from './operation.js';

// Hands every subscription that starts to the registry (src/runtime/subscription-registry.ts), which bounds it and
// counts it, or refuses it like the other refusals of a subscription (in the stream over SSE, as a result over
// graphql-ws). The connection is the graphql-ws hook's (`subscriber`, src/graphql/ws-server.ts), else the HTTP
// response the SSE stream is written to (a request handed to yoga.fetch in-process has none and is not counted).

/** What the transports put in the context beside Yoga's. */
export interface SubscriberContext {
  /** graphql-ws: the WebSocket's connection (one per socket). */
  subscriber?: SubscriberConnection;
  /** node:http's response (Yoga's server context): an SSE stream's connection. */
  res?: ServerResponse;
}

export function useOpenSubscriptions(registry: SubscriptionRegistry, metrics: GatewayMetrics): Plugin {
  return {
    onSubscribe({ args }) {
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) return;
          const ctx = args.contextValue as Partial<GraphQLContext> & SubscriberContext;
          const connection = ctx.subscriber ?? (ctx.res && registry.connect(eventStreamOutput(ctx.res)));
          if (!connection) return;
          const shape = operationShape(args.schema, args.document, args.operationName);
          const start = { keyId: ctx.principal?.keyId ?? null, requestId: ctx.requestId, operationName: args.operationName ?? null, fields: shape?.rootFields.map((f) => f.name) ?? [] };
          const followed = registry.follow(connection, start, result);
          if (!('refused' in followed)) return setResult(followed);
          metrics.rejected.inc({ reason: 'subscription_limit' });
          setResult({ errors: [refusal(followed.message, followed.refused, carriesHttpStatus(ctx.request) ? 429 : undefined, { maxSubscriptions: followed.maxSubscriptions })] });
        },
      };
    },
  };
}
