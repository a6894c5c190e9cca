import { randomUUID } from 'node:crypto';
import type { FieldIssue } from '../errors.js';
import type { Logger } from '../log.js';
import { CALLER_REQUIRED, type CallerIdentifier, type CallerIdentity, type Unauthenticated } from '../access/caller.js';
import type { CallerKind } from '../kit/trusted-documents-policy.js';
import type { GatewayMetrics } from '../kit/metrics.js';
import type { SubscriberConnection } from '../events/subscription-registry.js';
import type { GraphQLContext } from '../schema/context.js';

// A request digested once, by the edge that received it (the node:http front door for HTTP, Yoga's adapter reading
// it from its server context, graphql-ws from its upgrade request and then one child per operation): what every
// later stage (caller rules, the document step, guards, execution, the access line and metrics) reads of it. Nothing
// after the edge goes back to the transport's own request object.

/**
 * The caller's part of an operation's context: who calls (principal), the kind of its credential (`callerKind`: 'key',
 * 'token', or 'anonymous' when it has none), why it has none (`unauthenticated`: the 401's message and challenge), and
 * X-IdpScopes as sent.
 */
export type CallerContext = Pick<GraphQLContext, 'principal' | 'idpScopes'> & { callerKind: CallerKind; unauthenticated: Unauthenticated | null };

/**
 * Why a request is refused before anything else of it is read: under AUTH=on no valid caller (401 first), then a
 * caller header sent more than once (400). Each door renders it in its own envelope.
 */
export type CallerRefusal = { kind: 'unauthenticated'; why: Unauthenticated } | { kind: 'bad_request'; issue: FieldIssue };

/** How the answer travels: 'http' carries a status (401, 403, 429...); 'sse' and 'ws' carry errors in the stream. */
export type Transport = 'http' | 'sse' | 'ws';

/** The request's headers by lower-case name (one value: repeated ones joined with ", ", as fetch's Headers does). */
export interface RequestHeaders {
  get(name: string): string | null;
  /** Every header, names in lower case (the legacy door's routes read the headers they document). */
  entries(): Iterable<[string, string]>;
}

export interface RequestContext {
  /** The caller's X-Request-Id when it is sane, else a new UUID; answered in X-Request-Id and on every log line. */
  readonly id: string;
  /** performance.now() when the edge received the request. */
  readonly started: number;
  /** GET, POST, ...; WS for a graphql-ws operation. */
  readonly method: string;
  readonly path: string;
  readonly transport: Transport;
  readonly headers: RequestHeaders;
  /** A caller header that came more than once (src/http/caller-headers.ts), seen where copies are still apart. */
  readonly callerHeaderIssue: FieldIssue | null;
  /** The logger every line about this request goes through (it carries the request id). */
  readonly log: Logger;
  /** Who calls: asked once, the answer shared by every stage. */
  caller(): Promise<CallerContext>;
  /**
   * The one verdict on the caller (null: admitted), reached once and counted once however many stages ask. Rejects
   * when the caller cannot be checked now (the database or the provider away): each door answers that as an outage.
   */
  admission(): Promise<CallerRefusal | null>;
  /** The client connection a subscription's results are written to (an SSE response, a socket), where known. */
  readonly subscriber?: (() => SubscriberConnection | undefined) | undefined;
}

/** What an edge reads off its transport to make a request's context. */
export interface RequestFacts {
  /** The X-Request-Id sent, if any. */
  requestId?: string | null | undefined;
  /** An id made by the gateway itself (a graphql-ws operation's, from its connection's): taken as it is. */
  id?: string | undefined;
  method: string;
  path: string;
  transport: Transport;
  headers: RequestHeaders;
  callerHeaderIssue?: FieldIssue | null | undefined;
  /** The URL carries `access_token` (a token in the query string is refused, whatever else is sent). */
  urlCarriesToken?: boolean | undefined;
  /** The caller when the edge knows it already (a graphql-ws operation: the socket's caller as it stands now). */
  caller?: CallerContext | undefined;
  subscriber?: (() => SubscriberConnection | undefined) | undefined;
  started?: number | undefined;
}

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
export const REQUEST_ID_HEADER = 'x-request-id';

/** The id of a request that sent `header` as its X-Request-Id. */
export function requestIdOf(header: string | null | undefined): string {
  return header && SANE_ID.test(header) ? header : randomUUID();
}

/**
 * The transport a GraphQL answer to this Accept header travels in: an event stream unless the client also takes
 * JSON. Over SSE refusals carry no HTTP status: graphql-sse clients read errors only from a 200 stream and would
 * otherwise see a bare "NetworkError 403", so there the error travels as a `next` event, as over graphql-ws.
 */
export function transportOf(accept: string | null | undefined): Transport {
  const asked = accept ?? '';
  return asked.includes('text/event-stream') && !/application\/(graphql-response\+)?json/.test(asked) ? 'sse' : 'http';
}

/** Whether a refusal of this request carries its HTTP status. */
export const answersWithStatus = (context: Pick<RequestContext, 'transport'> | undefined): boolean => context?.transport === 'http';

/** Makes request contexts: the caller of each is identified once, on first ask, from its headers. */
export function requestContexts(options: { log: Logger; identifier: CallerIdentifier; auth: 'on' | 'off'; metrics?: GatewayMetrics | undefined }) {
  const { log, identifier, auth, metrics } = options;
  const verdictOf = async (caller: () => Promise<CallerContext>, issue: FieldIssue | null): Promise<CallerRefusal | null> => {
    if (auth === 'on') {
      const { principal, unauthenticated } = await caller();
      if (!principal) {
        metrics?.rejected.inc({ reason: 'unauthenticated' });
        return { kind: 'unauthenticated', why: unauthenticated ?? CALLER_REQUIRED };
      }
    }
    if (issue) {
      metrics?.rejected.inc({ reason: 'bad_request' });
      return { kind: 'bad_request', issue };
    }
    return null;
  };
  const callerOf = (facts: RequestFacts): (() => Promise<CallerContext>) => {
    if (facts.caller) {
      const known = Promise.resolve(facts.caller);
      return () => known;
    }
    let found: Promise<CallerContext> | undefined;
    return () => {
      if (!found) {
        const withScopes = (known: CallerIdentity): CallerContext => ({ ...known, idpScopes: facts.headers.get('x-idpscopes') });
        const identity = identifier.identify((name) => facts.headers.get(name), facts.urlCarriesToken === true);
        found = identity instanceof Promise ? identity.then(withScopes) : Promise.resolve(withScopes(identity));
      }
      return found;
    };
  };
  return function digest(facts: RequestFacts): RequestContext {
    const id = facts.id ?? requestIdOf(facts.requestId);
    let child: Logger | undefined;
    let verdict: Promise<CallerRefusal | null> | undefined;
    const caller = callerOf(facts);
    const issue = facts.callerHeaderIssue ?? null;
    return {
      id,
      started: facts.started ?? performance.now(),
      method: facts.method,
      path: facts.path,
      transport: facts.transport,
      headers: facts.headers,
      callerHeaderIssue: issue,
      // Most requests log nothing of their own: the child logger is made on first use.
      get log() {
        return (child ??= log.child({ requestId: id }));
      },
      caller,
      admission: () => (verdict ??= verdictOf(caller, issue)),
      subscriber: facts.subscriber,
    };
  };
}

export type Digest = ReturnType<typeof requestContexts>;

/** Headers of a fetch API request (Yoga's in-process fetch, where no node:http request exists). */
export function fetchHeaders(headers: Headers): RequestHeaders {
  return { get: (name) => headers.get(name), entries: () => headers.entries() };
}

/** Headers of a node:http request (`IncomingMessage.headers`: lower-case names, set-cookie an array). */
export function nodeHeaders(headers: Record<string, string | string[] | undefined>): RequestHeaders {
  const one = (value: string | string[] | undefined): string | null => (value === undefined ? null : Array.isArray(value) ? value.join(', ') : value);
  return {
    get: (name) => one(headers[name]),
    *entries() {
      for (const name in headers) {
        const value = one(headers[name]);
        if (value !== null) yield [name, value];
      }
    },
  };
}

/** The same request with the client connection its subscriptions write to (known only to the edge that answers). */
export function withSubscriber(context: RequestContext, subscriber: () => SubscriberConnection | undefined): RequestContext {
  return Object.create(context, { subscriber: { value: subscriber, enumerable: true } }) as RequestContext;
}
