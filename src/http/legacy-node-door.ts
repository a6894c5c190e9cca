import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestEdge } from '../graphql/plugins/use-request-id.js';
import type { LegacyAnswer, LegacyDoor } from '../rest/legacy-door.js';
import { ClientGone, readNodeBodyText } from './body.js';
import { browserRefusal, type BrowserPolicy } from './browser-policy.js';
import { noteCallerHeaders } from './caller-headers.js';

// The legacy door straight on node:http. A legacy call that is plainly one (a documented path with its method, no
// Origin header, a Host the browser rules accept, a path URL parsing leaves as it is) skips Yoga's fetch adapter: no
// Request/Response pair through web streams, no plugin chain asked about a path that is not theirs. What those
// plugins do for such a request is done here with the same functions (request id and access line, HTTP metrics), and
// the answer is the legacy door's own (src/rest/legacy-door.ts), so the two ways in answer alike (test/legacy-node-door.test.ts).
// Everything else, and everything with tracing on, goes through Yoga as before.

export interface LegacyNodeDoorOptions {
  door: LegacyDoor;
  maxBodyBytes: number;
  browserPolicy: BrowserPolicy;
  /** Yoga's fetch API Request class: the operation's context reads the caller's headers from such a request. */
  Request: typeof Request;
  /** Request id, access line and metrics, in Yoga's plugin order. */
  edges: readonly RequestEdge[];
  /** An answer the door failed to make (a bug, not the caller's mistake). */
  onError(error: unknown): void;
}

/** A handler for node:http that answers what it takes and returns false for what Yoga should answer. */
export function legacyNodeDoor(options: LegacyNodeDoorOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { door, edges } = options;
  return (req, res) => {
    const method = req.method ?? 'GET';
    const raw = req.url ?? '/';
    const query = raw.indexOf('?');
    const path = query === -1 ? raw : raw.slice(0, query);
    if (req.headers.origin !== undefined || !door.runsCall(method, path)) return false;
    if (browserRefusal(options.browserPolicy, { host: req.headers.host ?? null, origin: null })) return false;
    let url: URL;
    try {
      url = new URL(raw, 'http://localhost');
    } catch {
      return false;
    }
    // A path URL parsing would change (dot segments, characters it escapes) is left to Yoga, which sees it parsed.
    if (url.pathname !== path) return false;
    void serve(req, res, method, raw, path, url);
    return true;
  };

  async function serve(req: IncomingMessage, res: ServerResponse, method: string, raw: string, path: string, url: URL): Promise<void> {
    const request = new options.Request(`http://${req.headers.host ?? 'localhost'}${raw}`, { method, headers: req.headers as Record<string, string> });
    noteCallerHeaders(request, req);
    for (const edge of edges) edge.begin(request);
    let answer: LegacyAnswer | undefined;
    try {
      answer = await door.answer({ request, method, path, searchParams: () => url.searchParams, text: () => readNodeBodyText(req, options.maxBodyBytes) });
    } catch (error) {
      if (error instanceof ClientGone) return; // nobody to answer
      options.onError(error);
    }
    answer ??= door.internalError(path);
    const headers: Record<string, string> = { ...answer.headers };
    for (const edge of edges) Object.assign(headers, edge.finish(request, path, answer.status, 'node:http'));
    if (answer.body !== null) headers['content-length'] = String(Buffer.byteLength(answer.body));
    res.writeHead(answer.status, headers);
    res.end(answer.body ?? undefined);
  }
}
