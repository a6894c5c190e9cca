import type { IncomingMessage } from 'node:http';
import { PayloadTooLargeError } from '../errors.js';

/** Reads a request body as text, refusing (413) anything over `maxBytes` without buffering the excess. */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const declared = declaredLength(request);
  if (declared > maxBytes) throw bodyTooLarge(maxBytes);
  // Node's HTTP parser ends a body at its declared length (and refuses a request declaring it twice or beside
  // chunked encoding), so a declared length within the limit is the whole count: read it in one go.
  if (declared <= maxBytes) return request.text();
  if (!request.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      // Neither cancelled nor released (with Yoga's fetch API either destroys the connection at once, and a client
      // still sending meets a reset before it reads the 413): left as it is; the connection's lingering close
      // (src/http/lingering-close.ts) reads and drops the rest.
      throw bodyTooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
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

/** readBodyText for a node:http request (src/edge/node.ts): the same limit, read from the stream itself. */
export function readNodeBodyText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) return Promise.reject(bodyTooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      // The answer closes the connection (Connection: close); its lingering close drops the rest of the body.
      done();
      req.pause();
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
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}
