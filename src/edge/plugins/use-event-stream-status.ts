import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { GraphQLError } from 'graphql';
import { requestContextOf } from './use-request-context.js';

// Over server-sent events every GraphQL answer is HTTP 200: refusals (401, 403, 429, 400), a request Yoga cannot
// resolve to one operation (400), an outage (503) and an unexpected error travel in the stream as a `next` event
// carrying the errors, then `complete`. graphql-sse clients read events only from a 2xx answer: any other status is
// a NetworkError to them, which they retry up to five times on their own schedule (ignoring Retry-After) and then
// report as "Server responded with 503" without the error's code. In the stream they see the code at once
// (SERVICE_UNAVAILABLE with retryAfterSeconds, BAD_REQUEST, ...), as graphql-ws clients do.
// The refusals made by the request plugins already leave their status out for such requests (their transport, in
// the request's context, is 'sse');
// this is the one place that makes the rule hold for every other error as well. Refusals of the HTTP request itself,
// made before it is read as a GraphQL request (Host/Origin, body size, CSRF, method), keep their status on every
// transport.

export function useEventStreamStatus(): Plugin {
  return {
    onResultProcess({ result, setResult, serverContext }) {
      if (requestContextOf(serverContext).transport === 'http' || Array.isArray(result) || Symbol.asyncIterator in result) return;
      const single = result as Exclude<typeof result, AsyncIterable<unknown> | readonly unknown[]>;
      setResult({
        ...single,
        ...(single.errors && { errors: single.errors.map(withoutHttp) }),
        extensions: { ...single.extensions, http: { status: 200 } },
      });
    },
  };
}

/** The error without the HTTP status and headers it would carry over plain HTTP (Retry-After lives on in its extensions). */
function withoutHttp(error: GraphQLError): GraphQLError {
  const { http, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>;
  if (http === undefined) return error;
  return createGraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions,
  });
}
