import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { z } from 'zod';
import type { Area, RouteEnv } from './route.js';
import type { HttpAnswer } from './answer-shape.js';
import type { FieldIssue } from '../../errors.js';

// A legacy REST path (GET/POST/PUT with path, query, header and JSON body inputs) as data, like RpcRoute.

export type HttpMethod = 'GET' | 'POST' | 'PUT';

/** What a REST route receives, before validation. */
export interface HttpInput {
  path: Record<string, string>;
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
  body: unknown;
}

/** An error on its way out, before an area's envelope shapes it. */
export interface HttpFailure {
  status: number;
  code: string;
  message: string;
  fields?: FieldIssue[];
}

export interface HttpRoute<Input = unknown, Data = unknown, Vars = unknown> {
  area: Area;
  method: HttpMethod;
  /** Path template with `{name}` segments, as the spec writes it. */
  path: `/${string}`;
  summary: string;
  /** Validates and converts the raw inputs; issues name the part (`path.oid`, `query.pageSize`, `body.to.0`). */
  input: z.ZodType<Input>;
  document: TypedDocumentNode<Data, Vars>;
  variables: (input: Input, env: RouteEnv) => Vars;
  respond: (data: Data, input: Input) => { status?: number; body: unknown; headers?: Record<string, string> };
  /** The area's error body (the stub area's ResponseError, for example). */
  errorBody: (failure: HttpFailure) => unknown;
  /** What `respond` and `errorBody` return, declared for the OpenAPI document (src/api/legacy/answer-shape.ts). */
  answer: HttpAnswer;
}

export function httpRoute<Input, Data, Vars>(route: HttpRoute<Input, Data, Vars>): HttpRoute {
  return route as unknown as HttpRoute;
}

/** The default error body for REST areas that have no named model: `{ error: { status, code, message, fields } }`. */
export function defaultErrorBody(failure: HttpFailure): unknown {
  return { error: failure };
}

/** Compiles `/v1/type/{type}/ids/{ids}` into a matcher returning the decoded path parameters. */
export function compilePath(template: string): (pathname: string) => Record<string, string> | null {
  const names: string[] = [];
  const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}|\{(\w+)\}/g, (_m, a: string | undefined, b: string | undefined) => {
    names.push((a ?? b)!);
    return '([^/]+)';
  });
  const regex = new RegExp(`^${pattern}$`);
  return (pathname) => {
    const match = regex.exec(pathname);
    if (!match) return null;
    const params: Record<string, string> = {};
    try {
      names.forEach((name, i) => (params[name] = decodeURIComponent(match[i + 1]!)));
    } catch {
      return null;
    }
    return params;
  };
}
