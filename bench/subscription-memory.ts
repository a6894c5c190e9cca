import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { ROOT } from './lib.js';

// Memory per idle open subscriber: a gateway in a child process of its own (NODE_ENV=production, --expose-gc), N
// clients on one queue over one transport (graphql-ws: one socket and one subscription each; SSE: one stream each),
// none of them sent anything after it subscribed. The child collects garbage before each reading; the difference
// with and without the subscribers, divided by N, is what one costs, in two rounds (see below). A change at the end
// checks that every one of them was open and is answered.
//
//   npm run bench:subscription-memory                      # 1,000 per transport, embedded database (builds dist/)
//   SUBSCRIBERS=10000 TRANSPORTS=ws DATABASE_URL=postgresql://... npm run bench:subscription-memory

interface Reading {
  rss: number;
  heapUsed: number;
  external: number;
  open: number;
}

// The gateway's side: compiled JavaScript as `npm start` runs it (under tsx, every function would carry a `name`
// property of its own, a few hundred bytes per closure that production does not have).
const CHILD = `
const { loadConfig } = await import('./dist/config.js');
const { startGateway } = await import('./dist/app.js');
const { pino } = await import('pino');
const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', AUTH: 'off', SCHEDULER: 'off', TASK_DISPATCHER: 'off', DELIVERY_WORKER: 'off' });
const gateway = await startGateway(config, { log: pino({ level: 'warn' }) });
const { liveFollowers } = await import('./dist/events/live.js');
// Open subscriptions as their feeds see them: started, and waiting for the next state.
const open = () => liveFollowers(gateway.services.bus).filter((f) => f.ready).length;
process.on('message', async (message) => {
  if (message === 'count') return process.send({ rss: 0, heapUsed: 0, external: 0, open: open() });
  if (message === 'measure') {
    for (let i = 0; i < 3; i++) {
      globalThis.gc();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const { rss, heapUsed, external } = process.memoryUsage();
    return process.send({ rss, heapUsed, external, open: open() });
  }
  await gateway.close();
  process.exit(0);
});
process.send({ url: gateway.url });
`;

await parent();

async function parent() {
  const count = Number(process.env.SUBSCRIBERS ?? 1000);
  const transports = (process.env.TRANSPORTS ?? 'ws,sse').split(',');
  console.log(`${count} idle subscribers per transport, ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded database'}`);
  console.log('transport | round  | rss KB/subscriber | heap+external KB/subscriber');
  for (const transport of transports) {
    const gateway = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, NODE_ENV: 'production', DATA_DIR: process.env.DATABASE_URL ? '.data' : `memory://subscription-memory-${transport}` },
    });
    // A failed round must not leave the gateway running (it holds the terminal's output open).
    process.once('exit', () => gateway.kill());
    const url = (await nextMessage<{ url: string }>(gateway)).url;
    const graphql = (query: string) =>
      fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then((r) => r.json());
    const queue = `watched-${Date.now()}`;
    await graphql(`mutation { createQueue(input: { name: "${queue}" }) { name } }`);
    const query = `subscription { queueChanged(name: "${queue}") { name rate paused } }`;
    // Warm up: one subscriber opened and closed, so that code loaded and compiled once is not counted.
    const warm = transport === 'ws' ? await wsSubscriber(url, query) : await sseSubscriber(url, query);
    await until(gateway, (r) => r.open === 1);
    warm.close();
    await until(gateway, (r) => r.open === 0);
    // Two rounds: the first from a process that never held N subscribers (its resident set also keeps what opening
    // them cost on the way), the second after the first round was closed (what N idle subscribers hold).
    const rows: string[] = [];
    let subscribers: Subscriber[] = [];
    for (const round of ['first', 'second']) {
      for (const s of subscribers) s.close();
      await until(gateway, (r) => r.open === 0);
      const before = await measure(gateway);
      subscribers = [];
      for (let i = 0; i < count; i += 100) {
        subscribers.push(...(await Promise.all(Array.from({ length: Math.min(100, count - i) }, () => (transport === 'ws' ? wsSubscriber(url, query) : sseSubscriber(url, query))))));
      }
      await until(gateway, (r) => r.open === count);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const after = await measure(gateway);
      const kb = (bytes: number) => (bytes / count / 1024).toFixed(1);
      rows.push(`${transport.padEnd(9)} | ${round.padEnd(6)} | ${kb(after.rss - before.rss).padStart(17)} | ${kb(after.heapUsed + after.external - before.heapUsed - before.external).padStart(27)}`);
    }
    console.log(rows.join('\n'));
    await graphql(`mutation { changeQueueRate(name: "${queue}", rate: 7) { rate } }`);
    const deadline = Date.now() + 60_000;
    while (subscribers.some((s) => !s.received()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const answered = subscribers.filter((s) => s.received()).length;
    if (answered !== count) console.log(`  only ${answered} of ${count} subscribers got the change`);
    for (const s of subscribers) s.close();
    gateway.send('stop');
    await new Promise((resolve) => gateway.once('exit', resolve));
  }
}

interface Subscriber {
  received(): boolean;
  close(): void;
}

async function wsSubscriber(url: string, query: string): Promise<Subscriber> {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  let received = false;
  await new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.on('message', (raw) => {
      const message = JSON.parse(raw.toString()) as { type: string };
      if (message.type === 'connection_ack') {
        socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query } }));
        resolve(undefined);
      } else if (message.type === 'next') received = true;
    });
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init' })));
  });
  return { received: () => received, close: () => socket.terminate() };
}

async function sseSubscriber(url: string, query: string): Promise<Subscriber> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ query });
  let text = '';
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => resolve(s));
    s.once('error', reject);
  });
  socket.on('data', (chunk: Buffer) => (text = (text + chunk.toString()).slice(-4096)));
  socket.write(
    `POST /graphql HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\naccept: text/event-stream\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return { received: () => text.includes('"rate":7'), close: () => socket.destroy() };
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve) => child.once('message', (message) => resolve(message as T)));
}

async function measure(child: ChildProcess, what: 'measure' | 'count' = 'measure'): Promise<Reading> {
  child.send(what);
  return nextMessage<Reading>(child);
}

async function until(child: ChildProcess, check: (reading: Reading) => boolean) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const reading = await measure(child, 'count');
    if (check(reading)) return reading;
    if (Date.now() > deadline) throw new Error(`subscribers not open in time (${reading.open})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
