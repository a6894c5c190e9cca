import { createServer, connect, type Server, type Socket } from 'node:net';

// A TCP relay a test can cut: the gateway reaches its PostgreSQL through it, and `cut()` is an outage as the gateway
// meets it (open connections reset, new ones refused) without stopping a server other tests share. `hold` and
// `cutAfterReply` act on one connection, chosen by what the gateway sends on it (matched as latin1 text: a statement's
// text or its bound parameters). `blackhole()` and `retarget()` are a failover as a gateway meets it when the old
// primary's host vanished: what is open goes silent, what opens next reaches the new primary.

export interface TcpProxy {
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
  /**
   * From the first chunk the gateway sends that `match`es, that connection's data toward the server is held (a
   * statement in flight that does not progress) until `release()`; `seen` resolves when it is first held.
   */
  hold(match: (sent: string) => boolean): { seen: Promise<void>; release(): void };
  /**
   * Arms a cut that lands after a commit: once the gateway sends a chunk that `match`es, the server's next answer on
   * that connection that ends with ReadyForQuery (sent after an implicit transaction committed) is dropped and the
   * connection reset. Resolves when that happened. Other connections, and new ones, work on.
   */
  cutAfterReply(match: (sent: string) => boolean): Promise<void>;
  /**
   * Every connection open now goes silent: nothing more is forwarded either way, and nothing is closed or reset (the
   * gateway's side stays open, as when a host vanished and its packets are dropped). New connections are not affected.
   */
  blackhole(): void;
  /** New connections reach this server from now on (open ones keep theirs). */
  retarget(host: string, port: number): void;
}

/** ReadyForQuery ('Z', length 5): the server's last message of a query cycle, after its implicit commit. */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

interface Rule {
  match: (sent: string) => boolean;
  fired: () => void;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let target = { host: targetHost, port: targetPort };
  const sockets = new Set<Socket>();
  /** Silences each relayed connection open now. */
  const silencers = new Set<() => void>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  let holdRule: (Rule & { releases: (() => void)[]; released: boolean }) | undefined;
  let cutRule: Rule | undefined;
  let server: Server;
  let port = 0;
  const send = (to: Socket, chunk: Buffer) => {
    if (!to.destroyed) to.write(chunk);
  };
  const relay = (client: Socket) => {
    const upstream = connect(target.port, target.host);
    track(client);
    track(upstream);
    let held: Buffer[] | null = null;
    let cutArmed: Rule | undefined;
    let silent = false;
    const silence = () => (silent = true);
    silencers.add(silence);
    client.on('close', () => silencers.delete(silence));
    const forward = (chunk: Buffer) => {
      if (cutRule?.match(chunk.toString('latin1'))) {
        cutArmed = cutRule;
        cutRule = undefined;
      }
      send(upstream, chunk);
    };
    client.on('data', (chunk: Buffer) => {
      if (silent) return;
      if (held) return void held.push(chunk);
      const rule = holdRule;
      if (rule && !rule.released && rule.match(chunk.toString('latin1'))) {
        holdRule = undefined;
        const queue = (held = [chunk]);
        rule.releases.push(() => {
          held = null;
          for (const c of queue) forward(c);
        });
        rule.fired();
        return;
      }
      forward(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (silent) return;
      if (cutArmed && chunk.includes(READY_FOR_QUERY)) {
        const rule = cutArmed;
        cutArmed = undefined;
        client.resetAndDestroy();
        upstream.destroy();
        rule.fired();
        return;
      }
      send(client, chunk);
    });
    client.on('close', () => upstream.destroy());
    // A silenced connection stays open on the gateway's side whatever the old server does.
    upstream.on('close', () => silent || client.destroy());
  };
  const listen = async () => {
    server = createServer(relay);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  };
  const stop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.resetAndDestroy();
    await closed;
  };
  await listen();
  return {
    port,
    cut: stop,
    restore: listen,
    close: stop,
    hold(match) {
      let fired!: () => void;
      const seen = new Promise<void>((resolve) => (fired = resolve));
      const rule = { match, fired, releases: [] as (() => void)[], released: false };
      holdRule = rule;
      return {
        seen,
        release() {
          rule.released = true;
          if (holdRule === rule) holdRule = undefined;
          for (const release of rule.releases) release();
        },
      };
    },
    cutAfterReply(match) {
      return new Promise<void>((fired) => (cutRule = { match, fired }));
    },
    blackhole() {
      for (const silence of silencers) silence();
      silencers.clear();
    },
    retarget(host, port) {
      target = { host, port };
    },
  };
}
