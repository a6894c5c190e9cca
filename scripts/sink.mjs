// A local HTTP target for the tutorial and for trying tasks, jobs and webhooks by hand: answers every request with
// 200 {"received":true} and prints one line per request (method, path, the X-Task-* headers, the body).
// Usage: npm run sink [-- <port>]   (default 8080, on 127.0.0.1 only)
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`usage: npm run sink [-- <port>]  ("${process.argv[2]}" is not a port)`);
  process.exit(2);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const task = req.headers['x-task-name'] ? ` task=${req.headers['x-task-queue']}/${req.headers['x-task-name']} attempt=${req.headers['x-task-attempt']}` : '';
    console.log(`${req.method} ${req.url}${task} ${Buffer.concat(chunks).toString('utf8')}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
  });
});
server.on('error', (error) => {
  console.error(error.code === 'EADDRINUSE' ? `Port ${port} is in use; name another: npm run sink -- <port>` : error.message);
  process.exit(1);
});
server.listen(port, '127.0.0.1', () => console.log(`sink listening on http://127.0.0.1:${server.address().port}`));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));
