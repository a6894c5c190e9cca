import type { IncomingMessage } from 'node:http';
import { repeatedNodeHeader } from '../http/caller-headers.js';
import { urlCarriesToken } from '../pipeline/access.js';
import { nodeHeaders, transportOf, type Digest, type RequestContext } from '../pipeline/request-context.js';

/**
 * A node:http request digested (src/pipeline/request-context.ts): the one place an HTTP request's id, transport,
 * headers and repeated caller headers (kept apart only here, in headersDistinct) are read.
 */
export function digestNodeRequest(digest: Digest, req: IncomingMessage, path: string): RequestContext {
  const id = req.headers['x-request-id'];
  return digest({
    requestId: typeof id === 'string' ? id : null,
    method: req.method ?? 'GET',
    path,
    transport: transportOf(req.headers.accept),
    headers: nodeHeaders(req.headers),
    callerHeaderIssue: repeatedNodeHeader(req),
    urlCarriesToken: urlCarriesToken(req.url ?? '/'),
  });
}
