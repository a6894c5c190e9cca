import { createConnection, type Socket } from 'node:net';

export interface RawRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface RawAnswer {
  status: number;
  body: any;
}

/**
 * Sends requests so that the server reads them in one turn of its event loop, as it meets many busy clients: a
 * keep-alive connection each is opened and used once (GET /healthz), then every request is written in one
 * synchronous run, so all of them are waiting when the server next polls its sockets.
 */
export async function sendTogether(url: string, requests: RawRequest[]): Promise<RawAnswer[]> {
  const { hostname, port } = new URL(url);
  const connections = await Promise.all(requests.map(() => connect(hostname, Number(port))));
  await Promise.all(connections.map((c) => c.send({ method: 'GET', path: '/healthz' }, hostname, port)));
  const answers = requests.map((request, i) => connections[i]!.send(request, hostname, port));
  const all = await Promise.all(answers);
  for (const c of connections) c.socket.destroy();
  return all;
}

interface Connection {
  socket: Socket;
  send(request: RawRequest, hostname: string, port: string): Promise<RawAnswer>;
}

function connect(host: string, port: number): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host, port }, () => resolve({ socket, send }));
    socket.once('error', reject);
    let buffered = '';
    let waiting: ((answer: RawAnswer) => void) | undefined;
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      const answer = takeAnswer(buffered);
      if (!answer) return;
      buffered = buffered.slice(answer.length);
      const done = waiting;
      waiting = undefined;
      done?.(answer.answer);
    });
    // Written at once, synchronously: the caller writes all its requests in one run.
    function send(request: RawRequest, hostname: string, portText: string): Promise<RawAnswer> {
      const body = request.body ?? '';
      const head = [`${request.method} ${request.path} HTTP/1.1`, `host: ${hostname}:${portText}`, `content-length: ${Buffer.byteLength(body)}`];
      for (const [name, value] of Object.entries(request.headers ?? {})) head.push(`${name}: ${value}`);
      const answered = new Promise<RawAnswer>((done) => (waiting = done));
      socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
      return answered;
    }
  });
}

/** One whole answer at the start of `text` (read as latin1, so lengths are bytes), or null while it is incomplete. */
function takeAnswer(text: string): { answer: RawAnswer; length: number } | null {
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return null;
  const head = text.slice(0, split);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  let at = split + 4;
  let body = '';
  const length = /^content-length:\s*(\d+)/im.exec(head);
  if (length) {
    if (text.length < at + Number(length[1])) return null;
    body = text.slice(at, at + Number(length[1]));
    at += Number(length[1]);
  } else if (/^transfer-encoding:\s*chunked/im.test(head)) {
    for (;;) {
      const end = text.indexOf('\r\n', at);
      if (end < 0) return null;
      const size = parseInt(text.slice(at, end), 16);
      if (text.length < end + 2 + size + 2) return null;
      body += text.slice(end + 2, end + 2 + size);
      at = end + 2 + size + 2;
      if (!size) break;
    }
  }
  const decoded = Buffer.from(body, 'latin1').toString('utf8');
  return { answer: { status, body: decoded ? JSON.parse(decoded) : null }, length: at };
}
