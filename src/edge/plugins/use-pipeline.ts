import type { ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { SubscriberConnection } from '../../runtime/subscription-registry.js';
import type { OperationRequest, Pipeline } from '../../pipeline/pipeline.js';
import type { GraphQLParams } from '../../pipeline/params.js';

// Yoga's edge hands every operation it has read (GET, SSE, multipart, and whatever the node:http edge left to it) to
// the one pipeline: Yoga reads the transport (its request parsers, its parameter checks, which run after this hook)
// and answers (its result processors: JSON, event stream, multipart); parsing, validation, guards, execution and
// masking are the pipeline's, so envelop's parse, validate, context and execute never run.

export interface PipelineEdgeOptions {
  pipeline: Pipeline;
  operationRequest(request: Request): OperationRequest;
  /** The client connection of an SSE stream written to `res` (node:http's response, in Yoga's server context). */
  subscriber(res: ServerResponse): SubscriberConnection;
}

export function usePipeline(options: PipelineEdgeOptions): Plugin {
  const { pipeline } = options;
  return {
    async onParams({ request, setParamsHandler, setResult, context }) {
      const res = (context as { res?: ServerResponse }).res;
      // A request handed to yoga.fetch in-process has no response of node's: its streams are not counted.
      const operation = res ? { ...options.operationRequest(request), subscriber: () => options.subscriber(res) } : options.operationRequest(request);
      // Before Yoga's parameter checks, as on the node:http edge: 401 first, then repeated caller headers.
      const refused = await pipeline.callerRefusal(operation);
      if (refused) return setResult(refused);
      setParamsHandler(({ params }) => pipeline.run(params as GraphQLParams, operation));
    },
  };
}
