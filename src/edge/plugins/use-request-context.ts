import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { Observer } from '../../pipeline/observe.js';
import { urlCarriesToken } from '../../pipeline/access.js';
import { fetchHeaders, transportOf, type Digest, type RequestContext } from '../../pipeline/request-context.js';
import { digestNodeRequest } from '../request-digest.js';

// Yoga's edge of the request digest: the front door (src/edge/front-door.ts) hands Yoga each request's context in
// its server context, so every plugin reads the same one (`requestContextOf`); a request handed to Yoga without it
// (yoga.fetch in-process, or a node request that skipped the front door) is digested here, first. Its answer gets
// the request's access line and X-Request-Id (src/pipeline/observe.ts).

type WithContext = { requestContext?: RequestContext; req?: IncomingMessage };

/** The request's context, as the plugin below left it in Yoga's server context. */
export function requestContextOf(serverContext: unknown): RequestContext {
  const found = (serverContext as WithContext | undefined)?.requestContext;
  if (!found) throw new Error('a Yoga plugin ran before useRequestContext');
  return found;
}

export function useRequestContext(options: { digest: Digest; observer: Observer }): Plugin {
  return {
    onRequest({ request, url, serverContext }) {
      const server = serverContext as WithContext;
      if (server.requestContext) return;
      server.requestContext = server.req
        ? digestNodeRequest(options.digest, server.req, url.pathname)
        : options.digest({
            requestId: request.headers.get('x-request-id'),
            method: request.method,
            path: url.pathname,
            transport: transportOf(request.headers.get('accept')),
            headers: fetchHeaders(request.headers),
            urlCarriesToken: urlCarriesToken(request.url),
          });
    },
    onResponse({ response, serverContext }) {
      const context = (serverContext as WithContext).requestContext;
      if (!context) return;
      const headers = options.observer.answered(context, response.status);
      for (const name in headers) response.headers.set(name, headers[name]!);
    },
  };
}
