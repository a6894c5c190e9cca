import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestEdge } from './plugins/use-request-id.js';
import { browserRefusal, type BrowserPolicy } from '../http/browser-policy.js';
import { inConnectionOrder } from '../http/connection-order.js';
import { isLingering, lingerOnEarlyClose } from '../http/lingering-close.js';
import { requestTarget } from '../http/request-target.js';

// The one node:http handler in front of every door (the legacy node door, Yoga). Once per request, before either
// door builds a URL from it: the request target and Host are checked (a bad one is a JSON 400, or with AUTH=off the
// browser rules' 421, never a stack), an absolute-form target is answered by its path and authority, `OPTIONS *`
// is answered here, a connection's pipelined requests are put in order, and a refused body lingers
// (src/http/lingering-close.ts). Early answers carry a request id and an access line like every other.

export interface FrontDoorOptions {
  browserPolicy: BrowserPolicy;
  /** Yoga's fetch API Request class (the request edges key their state by such a request). */
  Request: typeof Request;
  /** Request id, access line and metrics, in Yoga's plugin order. */
  edges: readonly RequestEdge[];
  /** The doors behind: the request's target is an origin-form path with an accepted Host. */
  serve(req: IncomingMessage, res: ServerResponse): void;
}

/** Methods `OPTIONS *` names: what some path of the gateway answers. */
const ALLOW = 'GET, HEAD, POST, PUT, OPTIONS';

export function frontDoor(options: FrontDoorOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const ordered = inConnectionOrder(options.serve, isLingering);
  return (req, res) => {
    lingerOnEarlyClose(req);
    const target = requestTarget(req);
    if (target.form === 'origin') {
      normalizeContentType(req);
      if (target.path !== req.url) {
        req.url = target.path;
        if (target.host !== undefined) req.headers.host = target.host;
      }
      return ordered(req, res);
    }
    if (isLingering(req.socket)) return void req.resume();
    if (target.form === 'asterisk') {
      const refused = browserRefusal(options.browserPolicy, { host: target.host ?? null, origin: null });
      if (refused) return answer(req, res, refused.status, { errors: [{ message: refused.message, extensions: { code: refused.code } }] });
      return answer(req, res, 204, null, { allow: ALLOW });
    }
    const refused = target.hostFault ? browserRefusal(options.browserPolicy, { host: null, origin: null }) : null;
    if (refused) return answer(req, res, refused.status, { errors: [{ message: refused.message, extensions: { code: refused.code } }] });
    answer(req, res, 400, { errors: [{ message: target.reason, extensions: { code: 'BAD_REQUEST' } }] });
  };

  function answer(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
    const id = req.headers['x-request-id'];
    // Only what the edges read: the method (fetch refuses some, such as TRACE) and the caller's request id.
    let request: Request;
    try {
      request = new options.Request('http://localhost/', { method: req.method, headers: typeof id === 'string' ? { 'x-request-id': id } : {} });
    } catch {
      request = new options.Request('http://localhost/', { method: 'GET' });
    }
    for (const edge of options.edges) edge.begin(request);
    const text = body === null ? null : JSON.stringify(body);
    const headers: Record<string, string> = { ...extra };
    if (text !== null) headers['content-type'] = 'application/json; charset=utf-8';
    const path = (req.url ?? '').slice(0, 200);
    for (const edge of options.edges) Object.assign(headers, edge.finish(request, path, status, 'node:http'));
    if (text !== null) headers['content-length'] = String(Buffer.byteLength(text));
    res.writeHead(status, headers);
    res.end(text ?? undefined);
  }
}

/**
 * Media types are case-insensitive and may have spaces before their parameters (RFC 9110 8.3.1): put in one form once,
 * so that every edge and rule after this one reads `application/json` as the same type.
 */
function normalizeContentType(req: IncomingMessage): void {
  const type = req.headers['content-type'];
  if (type === undefined) return;
  const semicolon = type.indexOf(';');
  const media = (semicolon === -1 ? type : type.slice(0, semicolon)).trim().toLowerCase();
  const normal = semicolon === -1 ? media : `${media};${type.slice(semicolon + 1)}`;
  if (normal !== type) req.headers['content-type'] = normal;
}
