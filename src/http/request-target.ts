import type { IncomingMessage } from 'node:http';
import { LRUCache } from 'lru-cache';

// What node:http hands over unchecked and Yoga's adapter would build a URL from (and fail on, with a stack): the
// request target and the Host header. RFC 9112 section 3.2: a server must accept the absolute form
// (`GET http://host/path`), and then take the authority from the target, not from Host; `*` is for OPTIONS only.

/** A host name, an IPv4 address or a bracketed IPv6 literal, with an optional port. No userinfo, no escapes. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]{0,251}[A-Za-z0-9])?\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{0,5})?$/;
/** A name whose last label is a number is an IPv4 address to URL parsing (and `999.1.1.1` or `a.1` are refused). */
const NUMERIC_LAST_LABEL = /(?:^|\.)(?:0x[0-9a-f]*|\d+)\.?(?::\d*)?$/i;
const ABSOLUTE = /^https?:\/\/([^/?#]*)([^#]*)$/i;

export type RequestTarget =
  /** Origin form: the path and query as sent; `host` is the authority to serve (Host, or the absolute form's). */
  | { form: 'origin'; path: string; host: string | undefined }
  /** `OPTIONS *`: a question about the server as a whole. */
  | { form: 'asterisk'; host: string | undefined }
  /** Why the request cannot be served: `host` when the authority is the fault (the browser rules may speak first). */
  | { form: 'invalid'; reason: string; hostFault: boolean };

/**
 * Verdicts on the last few hundred Host values: a gateway is addressed by few names, and judging an address takes the
 * URL parser (a new URL per request otherwise, for a gateway asked by its IP address).
 */
const verdicts = new LRUCache<string, boolean>({ max: 256 });

export function isValidHost(host: string): boolean {
  let valid = verdicts.get(host);
  if (valid === undefined) verdicts.set(host, (valid = judgeHost(host)));
  return valid;
}

function judgeHost(host: string): boolean {
  if (!HOST.test(host)) return false;
  const port = /:(\d+)$/.exec(host.startsWith('[') ? host.slice(host.indexOf(']')) : host)?.[1];
  if (port !== undefined && Number(port) > 65535) return false;
  // Addresses are judged by the URL parser every door uses (an IPv6 literal's form, an IPv4 address's octets).
  if (!host.startsWith('[') && !NUMERIC_LAST_LABEL.test(host)) return true;
  try {
    new URL(`http://${host}/`);
    return true;
  } catch {
    return false;
  }
}

/** The target of a node:http request, checked; the absolute form is answered by its path (and its authority). */
export function requestTarget(req: Pick<IncomingMessage, 'url' | 'method' | 'headers'> & Partial<Pick<IncomingMessage, 'httpVersionMajor' | 'httpVersionMinor'>>): RequestTarget {
  const raw = req.url ?? '';
  let host = req.headers.host;
  let path = raw;
  if (raw === '*') {
    if (req.method !== 'OPTIONS') return { form: 'invalid', reason: 'The request target "*" is for OPTIONS only.', hostFault: false };
  } else if (!raw.startsWith('/')) {
    const absolute = ABSOLUTE.exec(raw);
    if (!absolute) return { form: 'invalid', reason: 'The request target must be a path (/...) or an absolute http URL.', hostFault: false };
    host = absolute[1]!;
    path = absolute[2]!.startsWith('/') ? absolute[2]! : `/${absolute[2]!}`;
  }
  // RFC 9112 section 3.2: an HTTP/1.1 request without Host is answered 400 (node:http's own check, which answers with
  // an empty body, is off); an HTTP/1.0 request without one is served as addressed to us.
  if (host === undefined && raw.startsWith('/') && (req.httpVersionMajor ?? 1) >= 1 && (req.httpVersionMinor ?? 1) >= 1) {
    return { form: 'invalid', reason: 'An HTTP/1.1 request must carry a Host header.', hostFault: false };
  }
  if (host !== undefined && !isValidHost(host)) return { form: 'invalid', reason: 'The Host (the authority of the request) is not a valid host name.', hostFault: true };
  return raw === '*' ? { form: 'asterisk', host } : { form: 'origin', path, host };
}

/** Whether the request asks for a protocol switch the gateway takes: a WebSocket on the GraphQL endpoint. */
export function takesUpgrade(req: IncomingMessage, endpoint: string): boolean {
  const upgrade = req.headers.upgrade;
  // A WebSocket handshake is a GET (RFC 6455); a POST asking for one is served as the POST it is.
  if (req.method !== 'GET' || typeof upgrade !== 'string' || !/(^|[\s,])websocket\s*(,|$)/i.test(upgrade)) return false;
  // The WebSocket server reads the raw target: an absolute form or a bad Host is left to the request handler.
  if (requestTarget(req).form !== 'origin' || !req.url?.startsWith('/')) return false;
  const query = req.url.indexOf('?');
  return (query === -1 ? req.url : req.url.slice(0, query)) === endpoint;
}
