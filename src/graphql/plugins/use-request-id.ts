import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../../log.js';
import type { GraphQLContext } from '../context.js';
import { originalRequest } from './remade-request.js';

// Every request gets an id: the caller's X-Request-Id when it is sane, else a new UUID. It is returned in the
// X-Request-Id response header, forwarded by legacy paths to the GraphQL request they become, carried by the
// context's child logger (`ctx.log`), and logged with the outcome of each request as one JSON line.

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
export const REQUEST_ID_HEADER = 'x-request-id';

export function requestIdOf(header: string | null | undefined): string {
  return header && SANE_ID.test(header) ? header : randomUUID();
}

/** Also gives the request-id part of an operation's context (`contextOf`) to code that builds one itself. */
export function useRequestId(log: Logger): Plugin<GraphQLContext> & { contextOf(request: Request | undefined): Pick<GraphQLContext, 'requestId' | 'log'> } {
  const ids = new WeakMap<Request, { id: string; started: number }>();
  const contextOf = (request: Request | undefined) => {
    const id = (request && ids.get(originalRequest(request))?.id) ?? (request ? requestIdOf(request.headers.get(REQUEST_ID_HEADER)) : randomUUID());
    return { requestId: id, log: log.child({ requestId: id }) };
  };
  return {
    contextOf,
    onRequest({ request }) {
      const id = requestIdOf(request.headers.get(REQUEST_ID_HEADER));
      ids.set(request, { id, started: performance.now() });
      try {
        request.headers.set(REQUEST_ID_HEADER, id); // so code reading the header (audit records) sees the id we answer with
      } catch {
        /* immutable headers: the id still reaches the context through the map */
      }
    },
    onContextBuilding({ context, extendContext }) {
      extendContext(contextOf((context as { request?: Request }).request));
    },
    onResponse({ request, response }) {
      const seen = ids.get(originalRequest(request));
      if (!seen) return;
      response.headers.set(REQUEST_ID_HEADER, seen.id);
      const url = new URL(request.url);
      log.info(
        { requestId: seen.id, method: request.method, path: url.pathname, status: response.status, ms: Math.round((performance.now() - seen.started) * 10) / 10 },
        'request',
      );
    },
  };
}
