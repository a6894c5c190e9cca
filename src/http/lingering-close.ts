import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

// A refusal sent before the request body was read (413, or any answer closing the connection early) must reach the
// client. node:http closes such a connection as soon as the answer is written, with the rest of the body unread in
// the kernel: the close then sends a TCP reset, and a client still writing its body gets a broken pipe and never
// reads the answer. So, as nginx's lingering close does: send the answer and our FIN, then keep reading (and
// discarding) the body until it ends, the client closes, or LINGER_MS pass, and only then close.

/** The longest a connection lingers after its answer (nginx: lingering_time 30 s, lingering_timeout 5 s). */
export const LINGER_MS = 5000;

const latest = new WeakMap<Socket, IncomingMessage>();

/**
 * Called for every request (src/edge/front-door.ts): remembers the connection's latest request and makes the
 * connection's close after an answer a lingering one when that request's body is not complete. One place for every
 * door: node:http calls `destroySoon` after any answer sent with `Connection: close`, whoever wrote it.
 */
export function lingerOnEarlyClose(req: IncomingMessage): void {
  const socket = req.socket;
  if (!latest.has(socket)) socket.destroySoon = lingeringDestroySoon;
  latest.set(socket, req);
}

/** Whether the connection is closing after an early answer (requests read after it are not served). */
export function isLingering(socket: Socket): boolean {
  return lingering.has(socket);
}

const lingering = new WeakSet<Socket>();

function lingeringDestroySoon(this: Socket): void {
  const req = latest.get(this);
  // The whole request was read (or the connection is gone): nothing unread can turn the close into a reset.
  if (!req || req.complete || this.destroyed) return Socket.prototype.destroySoon.call(this);
  lingering.add(this);
  if (this.writable) this.end();
  const close = () => {
    clearTimeout(timer);
    this.destroy();
  };
  const timer = setTimeout(close, LINGER_MS);
  timer.unref();
  req.once('end', close);
  req.once('close', close);
  this.once('end', close);
  this.once('close', () => clearTimeout(timer));
  // The door that refused the body may have paused it or left a reader on it: nobody reads it now; drop the rest.
  req.removeAllListeners('readable');
  req.removeAllListeners('data');
  req.resume();
}
