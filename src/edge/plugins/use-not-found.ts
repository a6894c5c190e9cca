import type { Plugin } from 'graphql-yoga';

export interface NotFoundOptions {
  graphqlEndpoint: string;
  /** Whether GraphiQL answers browsers at the endpoint (GRAPHIQL). */
  graphiql: boolean;
}

/** Long enough for any real path; a long one is cut so the answer stays small. */
const MAX_ECHOED_PATH = 200;

/**
 * Last of the request plugins: a path that no earlier plugin answered (health, metrics, every legacy path, with
 * their own 404s in their own envelopes) and that is not the GraphQL endpoint. Instead of Yoga's empty 404, the
 * answer says where the API is, for whoever typed a URL by hand.
 */
export function useNotFound(options: NotFoundOptions): Plugin {
  const endpoint = options.graphqlEndpoint;
  const where = `The API is at ${endpoint}${options.graphiql ? ' (GraphiQL in a browser)' : ''} and the legacy paths are listed at /openapi.json.`;
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname === endpoint || url.pathname === `${endpoint}/`) return;
      const path = url.pathname.length > MAX_ECHOED_PATH ? `${url.pathname.slice(0, MAX_ECHOED_PATH)}...` : url.pathname;
      const body = { error: { code: 'NOT_FOUND', message: `No such path: ${request.method} ${path}. ${where}` } };
      endResponse(new Response(JSON.stringify(body), { status: 404, headers: { 'content-type': 'application/json; charset=utf-8' } }));
    },
  };
}
