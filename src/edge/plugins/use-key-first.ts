import { processRegularResult, type Plugin } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import type { Pipeline } from '../../pipeline/pipeline.js';
import { jsonAnswerType } from '../answer-type.js';
import { requestContextOf } from './use-request-context.js';

// With AUTH=on, the GraphQL endpoint's 401 before anything else reads the request (its body size, its type, the CSRF
// rule, its document), on Yoga's edge: placed right after the browser rules. The verdict is the request's one
// (src/pipeline/request-context.ts); a repeated caller header is refused later, after the body's checks, where the
// pipeline asks the verdict again. An outage is answered later too, where the caller is asked again (503).

export function useKeyFirst(endpoint: string, pipeline: Pipeline): Plugin {
  return {
    async onRequest({ request, url, endResponse, fetchAPI, serverContext }) {
      if (url.pathname !== endpoint || request.method === 'OPTIONS') return;
      const context = requestContextOf(serverContext);
      let refused;
      try {
        refused = await context.admission();
      } catch {
        return;
      }
      if (refused?.kind !== 'unauthenticated') return;
      const result = (await pipeline.admit(context)) as ExecutionResult;
      endResponse(context.transport === 'sse' ? eventStreamAnswer(result, fetchAPI.Response) : (processRegularResult(result, fetchAPI, jsonAnswerType(request.headers.get('accept')) ?? 'application/json') as Response));
    },
  };
}

/** Over SSE a refusal travels in a 200 stream, as graphql-sse clients read it (docs/security.md). */
function eventStreamAnswer(result: ExecutionResult, ResponseClass: typeof Response): Response {
  const body = JSON.stringify({ errors: result.errors?.map((e) => ({ message: e.message, extensions: { code: e.extensions.code } })) });
  return new ResponseClass(`:\n\nevent: next\ndata: ${body}\n\nevent: complete\ndata:\n\n`, {
    status: 200,
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'content-encoding': 'none' },
  });
}
