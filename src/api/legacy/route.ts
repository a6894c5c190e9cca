import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { z } from 'zod';
import { data, type RpcAnswer } from './answer-shape.js';

// A legacy JSON-RPC path is data: which GraphQL operation it runs, how its params become variables and how
// the GraphQL data becomes the legacy `result`. Nothing else may know legacy shapes.

export type Area = 'identity' | 'scheduler' | 'queues' | 'tasks' | 'signatures' | 'notifications' | 'stubs';

export interface RouteEnv {
  defaultPageSize: number;
}

export interface RpcRoute<Params = unknown, Data = unknown, Vars = unknown> {
  area: Area;
  /** The documented path, also the JSON-RPC `method` it must carry (without the slash). */
  path: `/${string}`;
  summary: string;
  /** Shape and rules of `params`; the same zod rules the domain edge uses. */
  params: z.ZodType<Params>;
  /** The spec's pause requests put their parameters under `result`; accept them there too. */
  paramsMayComeAsResult?: boolean;
  document: TypedDocumentNode<Data, Vars>;
  variables: (params: Params, env: RouteEnv) => Vars;
  result: (data: Data, params: Params) => { result: unknown; rowsCount?: number };
  /** What `result` returns, declared for the OpenAPI document (src/api/legacy/answer-shape.ts). */
  answer: RpcAnswer;
}

/** Keeps each route's three type parameters tied together while the table holds them side by side. */
export function rpcRoute<Params, Data, Vars>(route: RpcRoute<Params, Data, Vars>): RpcRoute {
  return route as unknown as RpcRoute;
}

export function methodOf(route: RpcRoute): string {
  return route.path.slice(1);
}

/**
 * The common path shape: `params` are exactly the operation's variables and the legacy `result` is one root field
 * of its answer, as is (get, delete, open, cancel, ...).
 */
export function fieldRoute<Vars, F extends string>(route: {
  area: Area;
  path: `/${string}`;
  summary: string;
  params: z.ZodType<Vars>;
  document: TypedDocumentNode<Record<F, unknown>, Vars>;
  field: F;
  paramsMayComeAsResult?: boolean;
}): RpcRoute {
  const { field, ...rest } = route;
  return rpcRoute({ ...rest, variables: (p: Vars) => p, result: (d: Record<F, unknown>) => ({ result: d[field] }), answer: { result: data(field) } });
}
