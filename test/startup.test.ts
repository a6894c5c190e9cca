import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { StartupError } from '../src/db/startup-error.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { freePort } from './helpers/ports.js';
import { eventually } from './helpers/sink.js';

// What a process says and does when its database is not what it needs at start-up: one line naming the fault and the
// variable to check; pending migrations it was told not to apply keep it unready (and every request 503) until they
// are applied; a database migrated by a newer build is said, and served.

const ROOT = resolve(import.meta.dirname, '..');

function capturedLog() {
  const lines: { level: number; msg: string; pending?: string[]; unknown?: string[] }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

/** A server that takes connections and never answers, as a stopped (SIGSTOP) PostgreSQL does. */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/test`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const config = (env: Record<string, string>) => loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AUTH: 'off', SCHEDULER: 'off', TASK_DISPATCHER: 'off', DELIVERY_WORKER: 'off', ...env });

describe('start-up against a database that does not serve', () => {
  it('refused: one line naming the server and DATABASE_URL', async () => {
    const port = await freePort();
    const started = Date.now();
    const error = await startGateway(config({ DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/test` }), { log: pino({ level: 'silent' }) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as Error).message).toBe(`the database at 127.0.0.1:${port}/test refused the connection: is PostgreSQL running there? (check DATABASE_URL)`);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('frozen (takes the connection, never answers): one line naming the timeout and its variable, within it', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const error = await startGateway(config({ DATABASE_URL: silent.url, DATABASE_CONNECT_TIMEOUT_MS: '800' }), { log: pino({ level: 'silent' }) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StartupError);
      expect((error as Error).message).toMatch(/^the database at 127\.0\.0\.1:\d+\/test did not answer within 800 ms \(DATABASE_CONNECT_TIMEOUT_MS\): .*\(check DATABASE_URL\)$/);
      expect(Date.now() - started).toBeLessThan(4000);
    } finally {
      await silent.close();
    }
  });

  it('the command prints that one line, no stack, and exits 1', async () => {
    const silent = await silentServer();
    try {
      const bin = resolve(ROOT, 'node_modules/.bin');
      const child = spawn(resolve(bin, 'tsx'), ['src/main.ts', 'serve'], {
        cwd: ROOT,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AUTH: 'off', DATABASE_URL: silent.url, DATABASE_CONNECT_TIMEOUT_MS: '500' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code).toBe(1);
      expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^the database at 127\.0\.0\.1:\d+\/test did not answer within 500 ms \(DATABASE_CONNECT_TIMEOUT_MS\)/)]);
    } finally {
      await silent.close();
    }
  });
});

describe('start-up and migrations (PostgreSQL)', () => {
  const fresh: FreshDatabase[] = [];
  let gateway: Gateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });
  afterAll(async () => {
    for (const db of fresh) await db.drop();
  });

  it('MIGRATE_ON_START=off with migrations pending: says which, /readyz 503 naming them, requests 503 with Retry-After; ready once applied', async () => {
    const db = await freshDatabase('postgres');
    fresh.push(db);
    const { log, lines } = capturedLog();
    gateway = await startGateway(config({ DATABASE_URL: db.url, MIGRATE_ON_START: 'off', AUTH: 'on' }), { log });
    const warning = lines.find((l) => l.msg.startsWith('migrations are pending'));
    expect(warning?.level).toBe(40);
    expect(warning?.pending?.length).toBeGreaterThan(0);

    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ failing: expect.arrayContaining(['migrations']) });
    // A well-formed key the gateway cannot look up yet: the service is unavailable, not broken.
    const key = { 'x-api-key': 'gw_000000000000_0000000000000000000000000000000000000000000' };
    const legacy = await fetch(`${gateway.url}/getQueue`, { method: 'POST', headers: { 'content-type': 'application/json', ...key }, body: JSON.stringify({ jsonrpc: '2.0', method: 'getQueue', params: { name: 'q' }, id: 1 }) });
    expect(legacy.status).toBe(503);
    expect(legacy.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await legacy.json()).error.code).toBe(-32050);
    const graphql = await fetch(`${gateway.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...key }, body: JSON.stringify({ query: '{ queue(name: "q") { name } }' }) });
    expect(graphql.status).toBe(503);
    expect(graphql.headers.get('retry-after')).toMatch(/^\d+$/);

    const database = await openDatabase({ databaseUrl: db.url, dataDir: 'unused' });
    await applyMigrations(database.adapterFactory);
    await database.close();
    await eventually(async () => (await fetch(`${gateway!.url}/readyz`)).status === 200, 10_000);
  });

  it('a database migrated by a newer build: said in a warning naming the unknown migrations, and served', async () => {
    const db = await freshDatabase('postgres');
    fresh.push(db);
    const database = await openDatabase({ databaseUrl: db.url, dataDir: 'unused' });
    await applyMigrations(database.adapterFactory);
    await database.close();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ('future', 'x', now(), '29991231000000_from_a_newer_build', now(), 1)`,
    );
    await client.end();
    const { log, lines } = capturedLog();
    gateway = await startGateway(config({ DATABASE_URL: db.url }), { log });
    expect(lines.find((l) => l.msg.startsWith('the database was migrated by a newer build'))).toMatchObject({ level: 40, unknown: ['29991231000000_from_a_newer_build'] });
    expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
  });
});
