import type { Server } from 'node:http';

// Why the listener could not open, as the one sentence an operator needs (which variable to change) instead of a
// stack trace. Other errors pass through unchanged.
const LISTEN_FAILURES: Record<string, (port: number, host: string) => string> = {
  EADDRINUSE: (port) => `Port ${port} is in use; set PORT to a free port.`,
  EACCES: (port) => `Port ${port} needs privileges this process does not have; set PORT to a port above 1023.`,
  EADDRNOTAVAIL: (_port, host) => `HOST ${host} is not an address of this machine; set HOST to one of its addresses.`,
  ENOTFOUND: (_port, host) => `HOST ${host} does not resolve to an address; set HOST to an address of this machine.`,
};

export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/** Opens `server` on `host:port`; a failure rejects with a ListenError whose message says what to change. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const explain = error.code === undefined ? undefined : LISTEN_FAILURES[error.code];
      reject(explain ? new ListenError(explain(port, host), { cause: error }) : error);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
