import { createServer } from 'node:net';

/** A loopback port nothing listens on right now (for a server or peer the test starts itself). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise((ok) => server.close(ok));
  return port;
}

/** Polls `probe` every 100 ms until it answers a value (errors count as not yet); throws naming `what` after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}
