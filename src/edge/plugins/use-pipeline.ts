import type { ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { SubscriberConnection } from '../../events/subscription-registry.js';
import { outcomeOf, type Pipeline } from '../../pipeline/pipeline.js';
import { namesDocument, unreadableParams, type GraphQLParams } from '../../pipeline/params.js';
import { requestContextOf } from './use-request-context.js';
import { withSubscriber } from '../../pipeline/request-context.js';

// Yoga's edge hands every operation it has read (GET, SSE, multipart, and whatever the node:http edge left to it) to
// the one pipeline: Yoga reads the transport (its request parsers, its parameter checks, which run after this hook)
// and answers (its result processors: JSON, event stream, multipart); parsing, validation, guards, execution and
// masking are the pipeline's, so envelop's parse, validate, context and execute never run.
//
// A trusted document's id (`documentId`) reaches the pipeline as the node:http edge passes it: Yoga's GET parser
// reads only query, variables, operationName and extensions from the URL, so the id is added to what it read; Yoga's
// parameter check lets the name through (`extraParamNames`, src/edge/http-server.ts) but insists on a `query`, so a
// request naming a document carries an empty one past it (an empty query is no text to the pipeline).

export interface PipelineEdgeOptions {
  pipeline: Pipeline;
  /** The client connection of an SSE stream written to `res` (node:http's response, in Yoga's server context). */
  subscriber(res: ServerResponse): SubscriberConnection;
}

export function usePipeline(options: PipelineEdgeOptions): Plugin {
  const { pipeline } = options;
  return {
    onRequestParse({ request, url, requestParser, setRequestParser, serverContext }) {
      // Parameters that cannot be read are the client's mistake: 400 with a code on every transport (an SSE request
      // gets it in its stream), logged at debug. Yoga's parsers throw JSON.parse's SyntaxError (a 500) for a GET's or
      // a form's `variables`, and a GraphQLError without a status (a 200) for a bad multipart request.
      if (requestParser) {
        const form = request.headers.get('content-type')?.startsWith('application/x-www-form-urlencoded') ? request.clone() : undefined;
        setRequestParser(async (given) => {
          try {
            return await requestParser(given);
          } catch (error) {
            if ((error as Error | null)?.name === 'AbortError') throw error; // the client left: nobody to answer
            const sent = request.method === 'GET' ? url.searchParams : form ? new URLSearchParams(await form.text().catch(() => '')) : undefined;
            const refused = unreadableParams(error, sent);
            requestContextOf(serverContext).log.debug({ reason: refused.message }, 'GraphQL parameters refused');
            throw refused;
          }
        });
      }
      if (request.method !== 'GET') return;
      return {
        onRequestParseDone({ requestParserResult, setRequestParserResult }) {
          const documentId = url.searchParams.get('documentId');
          if (!documentId || Array.isArray(requestParserResult)) return;
          const withId: GraphQLParams = { ...requestParserResult, documentId };
          setRequestParserResult(withId as typeof requestParserResult);
        },
      };
    },
    async onParams({ params, setParams, setParamsHandler, setResult, context }) {
      const res = (context as { res?: ServerResponse }).res;
      const given = requestContextOf(context);
      // A request handed to yoga.fetch in-process has no response of node's: its streams are not counted.
      const operation = res ? withSubscriber(given, () => options.subscriber(res)) : given;
      // Before Yoga's parameter checks, as on the node:http edge: 401 first, then repeated caller headers. An outage
      // is answered by `handle`, which asks again.
      const refused = await pipeline.admit(operation).catch(() => null);
      if (refused) return setResult(refused);
      if (params.query == null && namesDocument(params as Record<string, unknown>)) setParams({ ...params, query: '' });
      setParamsHandler(async ({ params }) => outcomeOf(await pipeline.handle(params as GraphQLParams, operation)));
    },
  };
}
