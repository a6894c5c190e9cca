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
      await reader.cancel().catch(() => undefined);
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

export function bodyTooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`request body is over the limit of ${maxBytes} bytes`);
}
