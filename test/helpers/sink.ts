import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP peer for job targets: records every request; /fail answers 500, /slow waits 2 s, anything else 200.

export interface Hit {
  path: string;
  jobName: string;
  instanceId: string;
  scheduleTime: string;
  attempt: number;
  body: string;
  at: number;
}

export interface Sink {
  url: string;
  hits: Hit[];
  close(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const h = (name: string) => String(req.headers[name] ?? '');
      hits.push({
        path: req.url ?? '/',
        jobName: h('x-scheduler-job-name'),
        instanceId: h('x-scheduler-instance-id'),
        scheduleTime: h('x-scheduler-schedule-time'),
        attempt: Number(h('x-scheduler-attempt')),
        body,
        at: Date.now(),
      });
      const answer = () => {
        res.writeHead(req.url?.startsWith('/fail') ? 500 : 200, { 'content-type': 'text/plain' });
        res.end(req.url?.startsWith('/fail') ? 'broken' : 'ok');
      };
      if (req.url?.startsWith('/slow')) setTimeout(answer, 2000);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns a truthy value or the time is up. */
export async function eventually<T>(check: () => Promise<T | undefined | null | false>, timeoutMs = 8000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(everyMs);
  }
}
