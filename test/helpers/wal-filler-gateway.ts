import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { startGateway } from '../../src/app.js';
import { registerShutdown } from '../../src/cli/shutdown.js';

// A gateway process (as `serve` runs it: same shutdown on SIGTERM and on a failed database) that also writes
// write-ahead log fast when told to on stdin, without growing any table: the fault of a disk that something else
// filled, met by the database at a WAL segment switch. Lines out: {url} once listening, then {"filled": ...}.

const config = loadConfig();
const gateway = await startGateway(config, { log: pino({ level: 'warn' }, pino.destination(2)) });
registerShutdown(gateway, config.SHUTDOWN_GRACE_MS);
const db = gateway.database.prisma;
await db.$executeRawUnsafe('CREATE TABLE wal_filler (id int PRIMARY KEY, v text) WITH (fillfactor = 50)');
await db.$executeRawUnsafe("INSERT INTO wal_filler SELECT i, repeat('a', 1900) FROM generate_series(1, 200) i");
process.stdout.write(`${JSON.stringify({ url: gateway.url })}\n`);

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line !== 'fill-wal') return;
  const started = performance.now();
  for (let i = 0; i < 100_000; i++) {
    try {
      await db.$executeRawUnsafe('UPDATE wal_filler SET v = repeat(md5(random()::text), 59) WHERE id % 10 = $1', i % 10);
    } catch (error) {
      process.stdout.write(`${JSON.stringify({ filled: { updates: i, ms: performance.now() - started, error: String((error as Error).message).slice(-300), disk: gateway.database.disk?.state() } })}\n`);
      return;
    }
  }
  process.stdout.write(`${JSON.stringify({ filled: { updates: 100_000, error: null } })}\n`);
});
