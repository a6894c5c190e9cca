import type { DocumentNode, ExecutionResult, GraphQLSchema } from 'graphql';
import type { Logger } from '../log.js';
import type { GatewayMetrics } from '../kit/metrics.js';
import { operationShape } from './operation.js';
import { REQUEST_ID_HEADER, type RequestContext } from './request-context.js';

// The last stage of every request, whatever its door: one access line (JSON, with the request id, method, path,
// status and time), the HTTP or graphql-ws counters, and each operation's outcome and time by root field. The edges
// call `answered` as they send their answer and put the headers it returns on it.

type OperationArgs = { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null | undefined };

export interface ObserverOptions {
  log: Logger;
  metrics: GatewayMetrics;
  /** Maps a request path onto a bounded label (a route template, or "other"). */
  pathLabel(pathname: string): string;
}

export interface Observer {
  /** An HTTP answer sent: its access line and counters; returns the headers it carries (X-Request-Id). `via` names a way in other than Yoga's. */
  answered(request: RequestContext, status: number, via?: string): Record<string, string>;
  /** A graphql-ws operation answered (or refused, or subscribed): its access line and counter. */
  operationAnswered(request: RequestContext, name: string, outcome: string, type?: string): void;
  /** Starts timing an operation; the returned function counts its outcome. */
  operation(args: OperationArgs): (result: ExecutionResult | undefined) => void;
  /** Counts a subscription that started. */
  subscribed(args: OperationArgs): void;
}

const elapsedMs = (request: RequestContext) => Math.round((performance.now() - request.started) * 10) / 10;

export function createObserver({ log, metrics, pathLabel }: ObserverOptions): Observer {
  const countOutcome = (type: string, fields: string[], result: ExecutionResult | undefined, seconds: number) => {
    const code = result?.errors?.[0]?.extensions?.code;
    const outcome = result?.errors?.length ? (typeof code === 'string' ? code : 'ERROR') : 'ok';
    for (const field of fields) {
      metrics.operations.inc({ type, field, outcome });
      metrics.operationDuration.observe({ type, field }, seconds);
    }
  };
  return {
    answered(request, status, via) {
      const ms = elapsedMs(request);
      log.info({ requestId: request.id, method: request.method, path: request.path, status, ms, ...(via !== undefined && { via }) }, 'request');
      const path = pathLabel(request.path);
      metrics.httpRequests.inc({ method: request.method, path, status: String(status) });
      metrics.httpDuration.observe({ method: request.method, path }, ms / 1000);
      return { [REQUEST_ID_HEADER]: request.id };
    },
    operationAnswered(request, name, outcome, type = 'unknown') {
      metrics.wsOperations.inc({ type, outcome });
      log.info({ requestId: request.id, method: 'WS', path: request.path, operation: name, outcome, ms: elapsedMs(request), via: 'graphql-ws' }, 'request');
    },
    operation(args) {
      const shape = operationShape(args.schema, args.document, args.operationName);
      const fields = shape?.rootFields.map((f) => f.name) ?? [];
      const start = performance.now();
      return (result) => countOutcome(shape?.type ?? 'unknown', fields, result, (performance.now() - start) / 1000);
    },
    subscribed(args) {
      const shape = operationShape(args.schema, args.document, args.operationName);
      for (const f of shape?.rootFields ?? []) metrics.operations.inc({ type: 'subscription', field: f.name, outcome: 'subscribed' });
    },
  };
}
