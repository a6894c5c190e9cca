import { objectSlot } from '../../runtime/object-slot.js';

// A plugin that reads a request's body gives it back to the plugins after it as a new Request carrying the text (a
// body can be read once). Plugins that keep per-request state key it by the request they first saw: onResponse and
// the context are handed the new one, so they look through it to the original.

const originals = objectSlot<Request, Request>('original request');

/** `request` again, with `body` as its body, known to `originalRequest` as the same request. */
export function remadeRequest(Request: typeof globalThis.Request, request: Request, body: string): Request {
  const made = new Request(request.url, { method: request.method, headers: request.headers, body });
  originals.set(made, originalRequest(request));
  return made;
}

/** The request as the first plugin saw it. */
export function originalRequest(request: Request): Request {
  return originals.get(request) ?? request;
}
