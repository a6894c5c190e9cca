import { ServerResponse, STATUS_CODES, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';

/**
 * The node:http response every answer of the gateway is written to (`createServer({ ServerResponse })` in
 * src/app.ts). Yoga's node adapter passes a fetch Response's statusText to writeHead, and a Response built with a
 * status alone has an empty one: Node then sends `HTTP/1.1 404 ` with no reason phrase, which some legacy clients
 * and proxies log or match. An empty or missing phrase becomes the standard one; a phrase a Response chose stays.
 */
export class ReasonPhraseResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override writeHead(
    statusCode: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    if (typeof reasonOrHeaders === 'object') return super.writeHead(statusCode, reasonOrHeaders);
    return super.writeHead(statusCode, reasonOrHeaders || (STATUS_CODES[statusCode] ?? 'Unknown'), headers);
  }
}
