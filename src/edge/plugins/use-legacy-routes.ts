import type { Plugin } from 'graphql-yoga';
import { bodyStreamOf, readBodyText } from '../../http/body.js';
import type { LegacyDoor } from '../../api/legacy/legacy-door.js';
import { requestContextOf } from './use-request-context.js';

// The legacy door (src/api/legacy/legacy-door.ts) inside Yoga: for what the node:http door (src/edge/node.ts)
// leaves to Yoga's plugins (requests with an Origin, a refused Host, every path with tracing on, a 405).

export function useLegacyRoutes(options: { door: LegacyDoor; maxBodyBytes: number }): Plugin {
  // Answers are built with the Response class of Yoga's fetch API: its node adapter writes such a string body
  // straight to the socket, where a platform Response is read back through a web stream.
  let ResponseClass: typeof Response = Response;
  return {
    onYogaInit({ yoga }) {
      ResponseClass = yoga.fetchAPI.Response;
    },
    async onRequest({ request, url, endResponse, serverContext }) {
      const answer = await options.door.answer({
        request: requestContextOf(serverContext),
        method: request.method,
        path: url.pathname,
        searchParams: () => url.searchParams,
        text: () => readBodyText(bodyStreamOf(request, serverContext), request.headers.get('content-length'), options.maxBodyBytes),
      });
      if (answer) endResponse(new ResponseClass(answer.body, { status: answer.status, headers: answer.headers }));
    },
  };
}
