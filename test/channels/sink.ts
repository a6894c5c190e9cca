// A real HTTP peer on 127.0.0.1 (random port) that records requests and answers from a script.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundPolicy } from '../../src/http/outbound-policy.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait before answering (timeouts). */
  delayMs?: number;
}

export type Responder = (req: RecordedRequest) => Reply;

export interface Sink {
  url: string;
  requests: RecordedRequest[];
  /** Answers, consumed in order; the last one repeats. */
  reply(...replies: Array<Reply | Responder>): void;
  close(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
  const requests: RecordedRequest[] = [];
  let script: Array<Reply | Responder> = [{ status: 200, body: { ok: true } }];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const next = script.length > 1 ? script.shift() : script[0];
      const reply = typeof next === 'function' ? next(recorded) : (next ?? { status: 200 });
      const send = (): void => {
        if (res.destroyed) return;
        const body = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => {
      script = replies;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The send context of the channel tests: their peers listen on loopback, which OUTBOUND_ALLOW must name. */
export const LOOPBACK = { outbound: new OutboundPolicy(['127.0.0.1']) };
