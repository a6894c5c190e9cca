import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Observer } from '../pipeline/observe.js';
import type { Digest, RequestContext } from '../pipeline/request-context.js';
import { digestNodeRequest } from './request-digest.js';
import { browserRefusal, type BrowserPolicy } from '../http/browser-policy.js';
import { inConnectionOrder } from '../http/connection-order.js';
import { isLingering, lingerOnEarlyClose } from '../http/lingering-close.js';
import { requestTarget } from '../http/request-target.js';

// The one node:http handler in front of every door (the legacy node door, Yoga). Once per request, before either
// door builds a URL from it: the request target and Host are checked (a bad one is a JSON 400, or with AUTH=off the
// browser rules' 421, never a stack), an absolute-form target is answered by its path and authority, `OPTIONS *`
// is answered here, a connection's pipelined requests are put in order, and a refused body lingers
// (src/http/lingering-close.ts). Each request is digested here, once, when its turn comes (src/edge/request-digest.ts):
// the doors behind get its context. Early answers carry a request id and an access line like every other.

export interface FrontDoorOptions {
  browserPolicy: BrowserPolicy;
  digest: Digest;
  /** The access line and counters of every answer. */
  observer: Observer;
  /** Headers every answer made on node:http carries (the cache rule's). */
  answerHeaders: Readonly<Record<string, string>>;
  /** The doors behind: the request's target is an origin-form path with an accepted Host. */
  serve(req: IncomingMessage, res: ServerResponse, context: RequestContext): void;
}

/** Methods `OPTIONS *` names: what some path of the gateway answers. */
const ALLOW = 'GET, HEAD, POST, PUT, OPTIONS';

export function frontDoor(options: FrontDoorOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const ordered = inConnectionOrder((req, res) => options.serve(req, res, digestNodeRequest(options.digest, req, pathOf(req.url ?? '/'))), isLingering);
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
    const context = digestNodeRequest(options.digest, req, (req.url ?? '').slice(0, 200));
    const text = body === null ? null : JSON.stringify(body);
    const headers: Record<string, string> = { ...extra };
    if (text !== null) headers['content-type'] = 'application/json; charset=utf-8';
    Object.assign(headers, options.answerHeaders, options.observer.answered(context, status, 'node:http'));
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

/** Segments of letters, digits, `-`, `_` and `~`: URL parsing leaves such a path as it is, so it need not be asked. */
const PLAIN_PATH = /^(?:\/[\w~-]+)+\/?$/;

/** The path of an origin-form target as URL parsing makes it (dot segments resolved, characters escaped). */
export function pathOf(target: string): string {
  const query = target.indexOf('?');
  const raw = query === -1 ? target : target.slice(0, query);
  if (PLAIN_PATH.test(raw)) return raw;
  try {
    return new URL(target, 'http://localhost').pathname;
  } catch {
    return raw;
  }
}
