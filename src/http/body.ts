import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { PayloadTooLargeError } from '../errors.js';

/** A request body as node:http gives it: node's request itself, or a fetch request's body made a node stream. */
export type BodyStream = Readable;

/**
 * The one body reader of every door: a request body as text, refusing (413) a declared or actual body over
 * `maxBytes` without buffering the excess. `declared` is the Content-Length sent (null: none, chunked). A client that
 * leaves before its body ends is ClientGone: there is nobody to answer.
 */
export function readBodyText(body: BodyStream, declared: string | null | undefined, maxBytes: number): Promise<string> {
  if (declared != null && Number(declared) > maxBytes) return Promise.reject(bodyTooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onGone);
      body.off('close', onGone);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      // Neither destroyed nor drained here (a client still sending would meet a reset before it reads the 413): the
      // answer closes the connection (Connection: close), and its lingering close drops the rest of the body.
      done();
      body.pause();
      reject(bodyTooLarge(maxBytes));
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    };
    const onGone = () => {
      done();
      reject(new ClientGone('the request ended before its body did'));
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onGone);
    body.on('close', onGone);
  });
}

/**
 * The body of a request Yoga's edge holds: node's request when Yoga was handed one (its body is read from the socket
 * as the node:http door reads it), else the fetch request's own body (yoga.fetch in-process).
 */
export function bodyStreamOf(request: Request, serverContext: unknown): BodyStream {
  const req = (serverContext as { req?: IncomingMessage } | undefined)?.req;
  if (req && !req.readableEnded && req.listenerCount('data') === 0) return req;
  return Readable.fromWeb((request.body ?? new Blob([]).stream()) as import('node:stream/web').ReadableStream<Uint8Array>);
}

/** The Content-Length a request declares; NaN when it declares none (chunked). */
export function declaredLength(request: Request): number {
  const header = request.headers.get('content-length');
  return header === null ? Number.NaN : Number(header);
}

/** The 413 a GraphQL request over MAX_BODY_BYTES gets on every edge (the rest of its body was never read). */
export function graphqlTooLargeAnswer(error: PayloadTooLargeError): { status: 413; headers: Record<string, string>; body: string } {
  return {
    status: 413,
    headers: { 'content-type': 'application/json; charset=utf-8', connection: 'close' },
    body: JSON.stringify({ errors: [{ message: error.message, extensions: { code: error.code } }] }),
  };
}

export function bodyTooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`request body is over the limit of ${maxBytes} bytes`);
}

/** The caller closed the connection before its body ended: there is nobody to answer. */
export class ClientGone extends Error {}
