import type { Plugin } from 'graphql-yoga';
import { PayloadTooLargeError } from '../../errors.js';
import { bodyStreamOf, bodyTooLarge, declaredLength, graphqlTooLargeAnswer, readBodyText } from '../../http/body.js';

// MAX_BODY_BYTES for /graphql (the legacy paths apply it themselves): a declared or actual body over the limit
// is answered 413 in the GraphQL error envelope, without buffering the excess.

export function useBodyLimit(options: { endpoint: string; maxBodyBytes: number }): Plugin {
  return {
    async onRequest({ request, url, setRequest, endResponse, fetchAPI, serverContext }) {
      if (url.pathname !== options.endpoint || request.method === 'GET' || request.method === 'HEAD') return;
      try {
        // A declared length is a bound Node's HTTP parser holds the body to: Yoga reads it as it comes.
        const declared = declaredLength(request);
        if (!Number.isNaN(declared)) {
          if (declared > options.maxBodyBytes) throw bodyTooLarge(options.maxBodyBytes);
          return;
        }
        if (!request.body) return;
        // A body can be read once: the plugins after this one get it again, as the text that was read. Their state is
        // the request's context (src/edge/plugins/use-request-context.ts), not this Request.
        const text = await readBodyText(bodyStreamOf(request, serverContext), null, options.maxBodyBytes);
        setRequest(new fetchAPI.Request(request.url, { method: request.method, headers: request.headers, body: text }));
      } catch (error) {
        if (!(error instanceof PayloadTooLargeError)) throw error;
        const { status, headers, body } = graphqlTooLargeAnswer(error);
        endResponse(new fetchAPI.Response(body, { status, headers }));
      }
    },
  };
}
