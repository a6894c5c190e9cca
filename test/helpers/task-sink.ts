import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP peer for task targets. It counts the requests in flight (the queue-rate tests read `maxConcurrent`)
// and answers by path: /fail -> 500; /hold -> never answers until `release()` (or the caller hangs up);
// ?ms=N delays the answer N ms; ?failUntil=N answers 500 to attempts before the Nth; ?answer=N answers N letters;
// anything else -> 200 "done <task name>".

export interface TaskHit {
  path: string;
  task: string;
  queue: string;
  attempt: number;
  method: string;
  contentType: string;
  body: string;
  start: number;
  end?: number;
  status?: number;
}

export interface TaskSink {
  url: string;
  hits: TaskHit[];
  readonly current: number;
  readonly maxConcurrent: number;
  resetMax(): void;
  /** Answers every held /hold request (and later ones at once) with 200. */
  release(): void;
  close(): Promise<void>;
}

export async function startTaskSink(): Promise<TaskSink> {
  const hits: TaskHit[] = [];
  let current = 0;
  let max = 0;
  let released = false;
  const held = new Set<() => void>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    current += 1;
    max = Math.max(max, current);
    let body = '';
    let counted = true;
    const done = () => {
      if (counted) current -= 1;
      counted = false;
    };
    req.on('data', (c: Buffer) => (body += c.toString()));
    res.on('close', done);
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://sink');
      const hit: TaskHit = {
        path: url.pathname,
        task: String(req.headers['x-task-name'] ?? ''),
        queue: String(req.headers['x-task-queue'] ?? ''),
        attempt: Number(req.headers['x-task-attempt'] ?? 0),
        method: req.method ?? '',
        contentType: String(req.headers['content-type'] ?? ''),
        body,
        start: Date.now(),
      };
      hits.push(hit);
      const answer = () => {
        if (res.destroyed) return;
        hit.status = url.pathname === '/fail' || hit.attempt < Number(url.searchParams.get('failUntil') ?? 0) ? 500 : 200;
        hit.end = Date.now();
        done();
        res.writeHead(hit.status, { 'content-type': 'text/plain' });
        const letters = Number(url.searchParams.get('answer') ?? 0);
        res.end(hit.status !== 200 ? 'broken' : letters > 0 ? 'a'.repeat(letters) : `done ${hit.task}`);
      };
      if (url.pathname === '/hold' && !released) {
        held.add(answer);
        return;
      }
      const ms = Number(url.searchParams.get('ms') ?? 0);
      if (ms > 0) setTimeout(answer, ms);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    get current() {
      return current;
    },
    get maxConcurrent() {
      return max;
    },
    resetMax() {
      max = current;
    },
    release() {
      released = true;
      for (const answer of held) answer();
      held.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
