import type { IncomingMessage } from 'node:http';
import type { FieldIssue } from '../errors.js';

// X-IdpScopes narrows what a caller may see. Sent twice, node:http (and fetch's Headers) join the two into one
// comma list, which would release the scopes of both: a component on the way that appends the header (a proxy, a
// client library adding its default) would widen the caller's view instead of narrowing it. So the header must come
// once; its one value may list scopes space- or comma-separated, as documented. Only the edge still sees repeated
// headers apart (IncomingMessage.headersDistinct), so each request's digest notes them there (src/edge/request-digest.ts)
// and the caller's verdict, after the key's (401 first), refuses the request: 400 in the door's envelope, graphql-ws close 4400.

/** Caller headers that must come at most once. */
const SINGLE_CALLER_HEADERS = ['x-idpscopes'] as const;
const SPELLING: Record<(typeof SINGLE_CALLER_HEADERS)[number], string> = { 'x-idpscopes': 'X-IdpScopes' };

/** The issue of `count` copies of `name`: the header it names and why. */
function repeated(name: (typeof SINGLE_CALLER_HEADERS)[number], count: number): FieldIssue {
  const header = SPELLING[name];
  return { field: header, message: `was sent ${count} times; send it once, its scopes space- or comma-separated` };
}

/** The refusal's message for `issue`. */
export function callerHeaderMessage(issue: FieldIssue): string {
  return `Bad request: ${issue.field} ${issue.message}`;
}

/** The first caller header among `distinct` (name -> every value received) that came more than once; null if none. */
export function repeatedCallerHeader(distinct: (name: string) => readonly unknown[] | undefined): FieldIssue | null {
  for (const name of SINGLE_CALLER_HEADERS) {
    const values = distinct(name);
    if (values && values.length > 1) return repeated(name, values.length);
  }
  return null;
}

type NodeHeaders = Pick<IncomingMessage, 'headers' | 'headersDistinct'>;

/** The same for node:http's request, whose headersDistinct keeps every copy apart. */
export function repeatedNodeHeader(req: NodeHeaders): FieldIssue | null {
  // Most requests carry none of these headers: `headers`, built already, says so without building headersDistinct.
  if (SINGLE_CALLER_HEADERS.every((name) => req.headers[name] === undefined)) return null;
  return repeatedCallerHeader((name) => req.headersDistinct[name]);
}

/** The same for a graphql-ws connection_init payload, whose keys name headers in any case. */
export function repeatedPayloadHeader(payload: Record<string, unknown>): FieldIssue | null {
  const keys = Object.keys(payload).map((k) => k.toLowerCase());
  return repeatedCallerHeader((name) => keys.filter((k) => k === name));
}
