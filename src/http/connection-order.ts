import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// Pipelined requests on one keep-alive connection reach node:http's handler at once, and would run side by side: a
// `createQueue` then a `getQueue` would race. RFC 9112 section 9.3.2 allows parallel processing of pipelined
// requests only when they are all safe. So, per connection, in arrival order: an unsafe request starts only once
// every earlier request has been answered, and any request only once every earlier unsafe one has. Safe requests
// (GET, HEAD, OPTIONS) next to each other still overlap. A connection that closes after an answer (Connection:
// close) serves nothing it received after it.

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

interface Waiting {
  unsafe: boolean;
  start(): void;
  drop(): void;
}

interface Lane {
  inFlight: number;
  unsafeInFlight: number;
  queue: Waiting[];
}

const lanes = new WeakMap<Socket, Lane>();

/**
 * Runs `serve(req, res)` when the request's turn on its connection comes. `closing(socket)` says the connection
 * will carry no more answers: requests queued behind it are dropped (their bodies read and discarded).
 */
export function inConnectionOrder(
  serve: (req: IncomingMessage, res: ServerResponse) => void,
  closing: (socket: Socket) => boolean,
): (req: IncomingMessage, res: ServerResponse) => void {
  const drain = (socket: Socket, lane: Lane) => {
    while (lane.queue.length > 0) {
      if (closing(socket) || socket.destroyed || !socket.writable) {
        for (const waiting of lane.queue.splice(0)) waiting.drop();
        return;
      }
      const next = lane.queue[0]!;
      if (next.unsafe ? lane.inFlight > 0 : lane.unsafeInFlight > 0) return;
      lane.queue.shift();
      next.start();
    }
  };
  return (req, res) => {
    const socket = req.socket;
    let lane = lanes.get(socket);
    if (!lane) lanes.set(socket, (lane = { inFlight: 0, unsafeInFlight: 0, queue: [] }));
    const current = lane;
    if (closing(socket) || !socket.writable) return void req.resume();
    const unsafe = !SAFE.has(req.method ?? 'GET');
    const start = () => {
      current.inFlight++;
      if (unsafe) current.unsafeInFlight++;
      res.once('close', () => {
        current.inFlight--;
        if (unsafe) current.unsafeInFlight--;
        drain(socket, current);
      });
      serve(req, res);
    };
    // Nothing in flight and nobody waiting (every request that is not pipelined): start at once.
    if (current.queue.length === 0 && (unsafe ? current.inFlight === 0 : current.unsafeInFlight === 0)) return start();
    current.queue.push({ unsafe, start, drop: () => void req.resume() });
  };
}
