import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log.js';

// What node:http answers on its own when it cannot read a request (a malformed one, headers over its limit, a
// request not received within HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS): the same JSON error envelope and
// request id header as every other refusal, instead of a bare status line.

const STATUS_BY_CODE: Record<string, { status: number; code: string; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'REQUEST_TIMEOUT', message: 'The request was not received in time; the connection is closed.' },
  HPE_HEADER_OVERFLOW: { status: 431, code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', message: 'The request headers are too large.' },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The chunk extensions of the request are too large.' },
};
const MALFORMED = { status: 400, code: 'BAD_REQUEST', message: 'The request is not valid HTTP/1.1.' };

type ClientSocket = Socket & { _httpMessage?: { headersSent?: boolean } | null };

/** The server's 'clientError' listener. */
export function answerClientError(log: Logger): (error: Error & { code?: string }, socket: Socket) => void {
  return (error, socket) => {
    const pending = (socket as ClientSocket)._httpMessage;
    // Nobody to answer, or an answer already under way on this connection (nothing may be written in its middle).
    if (error.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) return void socket.destroy();
    const refusal = (error.code && STATUS_BY_CODE[error.code]) || MALFORMED;
    const requestId = randomUUID();
    log.debug({ requestId, code: error.code, status: refusal.status }, 'a request node:http could not read');
    const body = JSON.stringify({ errors: [{ message: refusal.message, extensions: { code: refusal.code } }] });
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
    setTimeout(() => socket.destroy(), 1000).unref();
  };
}

/**
 * The server's 'connect' listener: a CONNECT (a proxy's tunnel request) is not served here. Without a listener
 * node:http drops the connection without a word; the caller gets the same JSON envelope as any refusal.
 */
export function refuseConnect(log: Logger): (req: { method?: string }, socket: Socket) => void {
  return (_req, socket) => {
    const requestId = randomUUID();
    log.debug({ requestId, status: 405 }, 'a CONNECT request refused');
    const body = JSON.stringify({ errors: [{ message: 'CONNECT is not served: this is an API, not a proxy.', extensions: { code: 'METHOD_NOT_ALLOWED' } }] });
    socket.end(
      `HTTP/1.1 405 ${STATUS_CODES[405]}\r\nAllow: GET, HEAD, POST, PUT, OPTIONS\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
    setTimeout(() => socket.destroy(), 1000).unref();
  };
}
