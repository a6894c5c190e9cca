import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../../log.js';
import type { GraphQLContext } from '../../schema/context.js';
import { originalRequest } from './remade-request.js';
import { objectSlot } from '../../runtime/object-slot.js';

// Every request gets an id: the caller's X-Request-Id when it is sane, else a new UUID. It is returned in the
// X-Request-Id response header, forwarded by legacy paths to the GraphQL request they become, carried by the
// context's child logger (`ctx.log`), and logged with the outcome of each request as one JSON line.

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
export const REQUEST_ID_HEADER = 'x-request-id';

export function requestIdOf(header: string | null | undefined): string {
  return header && SANE_ID.test(header) ? header : randomUUID();
}

/**
 * What every HTTP door does at a request's start and end (Yoga's plugins, and the node:http legacy door in
 * src/edge/node.ts): `finish` returns the headers the answer carries for it.
 */
export interface RequestEdge {
  begin(request: Request): void;
  /** `via` names a way in other than Yoga's (the access line says which way a request took). */
  finish(request: Request, path: string, status: number, via?: string): Record<string, string> | undefined;
}

/** Also gives the request-id part of an operation's context (`contextOf`) to code that builds one itself. */
export function useRequestId(log: Logger): Plugin<GraphQLContext> & RequestEdge & { contextOf(request: Request | undefined): { requestId: string; log: Logger } } {
  const ids = objectSlot<Request, { id: string; started: number }>('request id');
  const contextOf = (request: Request | undefined) => {
    const id = (request && ids.get(originalRequest(request))?.id) ?? (request ? requestIdOf(request.headers.get(REQUEST_ID_HEADER)) : randomUUID());
    return { requestId: id, log: log.child({ requestId: id }) };
  };
  const begin = (request: Request) => {
    const id = requestIdOf(request.headers.get(REQUEST_ID_HEADER));
    ids.set(request, { id, started: performance.now() });
    try {
      request.headers.set(REQUEST_ID_HEADER, id); // so code reading the header (audit records) sees the id we answer with
    } catch {
      /* immutable headers: the id still reaches the context through the map */
    }
  };
  const finish = (request: Request, path: string, status: number, via?: string): Record<string, string> | undefined => {
    const seen = ids.get(originalRequest(request));
    if (!seen) return undefined;
    const ms = Math.round((performance.now() - seen.started) * 10) / 10;
    log.info({ requestId: seen.id, method: request.method, path, status, ms, ...(via !== undefined && { via }) }, 'request');
    return { [REQUEST_ID_HEADER]: seen.id };
  };
  return {
    contextOf,
    begin,
    finish,
    onRequest({ request }) {
      begin(request);
    },
    onResponse({ request, response }) {
      const headers = finish(request, new URL(request.url).pathname, response.status);
      for (const name in headers) response.headers.set(name, headers[name]!);
    },
  };
}
