import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { rpc } from './helpers/gateway.js';
import { startGatewayProcess } from './helpers/process.js';
import { eventually } from './helpers/sink.js';
import { startTaskSink } from './helpers/task-sink.js';

// `serve` stopped by SIGTERM as an operator's supervisor stops it: not ready at once, then exited within the grace
// time, having handed back what it ran. Alone in its run (vitest.config.ts): these are bounds on time. The `keys`
// commands run beside other files (operations.test.ts).

const ROOT = resolve(import.meta.dirname, '..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');

describe('serve and SIGTERM', () => {
  let db: FreshDatabase | undefined;
  afterAll(() => db?.drop());

  it('reports not ready while draining, exits 0 within the grace time and releases the embedded database', async () => {
    // A copy of the migrated embedded database: the process does not spend its start on an initdb.
    db = await freshDatabase('pglite');
    const env = { ...db.env, PORT: '0', LOG_LEVEL: 'info', SHUTDOWN_READY_DELAY_MS: '600', SHUTDOWN_GRACE_MS: '5000' };
    const child: ChildProcess = spawn(TSX, ['src/main.ts', 'serve'], { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    // The AUTH=off warning is the line after the listening line (each line is its own write): wait for both.
    const url = await new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no listening line and AUTH warning: ${out}`)), 45_000);
      child.stdout!.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.includes('gateway listening'));
        if (line && out.includes('authentication is OFF')) {
          clearTimeout(timer);
          res(JSON.parse(line).url);
        }
      });
    });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const exited = new Promise<{ code: number | null; at: number }>((r) => child.on('exit', (code) => r({ code, at: Date.now() })));
    const sentAt = Date.now();
    child.kill('SIGTERM');
    // Asked until the signal has arrived; it keeps answering for SHUTDOWN_READY_DELAY_MS after that.
    const draining = await eventually(async () => {
      const res = await fetch(`${url}/readyz`);
      return res.status === 503 && res;
    }, 5000, 20);
    expect(await draining.json()).toMatchObject({ checks: { draining: true } });
    const { code, at } = await exited;
    expect(code).toBe(0);
    expect(at - sentAt).toBeLessThan(5000);
    expect(out).toContain('shutting down');
    // The data directory's lock is released: another process opens it at once.
    const again = await startGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', ...db.env }), { log: pino({ level: 'silent' }) });
    await again.close();
  }, 60_000);
});

describe('shutdown phases side by side (PostgreSQL)', () => {
  it('stops claiming at SIGTERM, keeps answering through the ready delay, and hands a running task back before the grace time ends', async () => {
    const db = await freshDatabase('postgres');
    const sink = await startTaskSink();
    // Waiting for running tasks (60 s) would outlast the grace (3 s): the hand-back must not wait for it.
    const child = startGatewayProcess({ ...db.env, SHUTDOWN_GRACE_MS: '3000', SHUTDOWN_READY_DELAY_MS: '1000', TASK_STOP_WAIT_MS: '60000', SCHEDULER: 'off', DELIVERY_WORKER: 'off' });
    const sql = new pg.Client({ connectionString: db.url });
    try {
      const url = await child.url;
      await rpc(url, 'createQueue', { name: 'drain', rate: 5 });
      await rpc(url, 'createTask', { queueName: 'drain', name: 'held', target: { url: `${sink.url}/hold` } });
      await eventually(async () => sink.hits.some((h) => h.task === 'held'));
      const exited = new Promise<{ code: number | null; at: number }>((r) => child.proc.once('exit', (code) => r({ code, at: Date.now() })));
      const sentAt = Date.now();
      child.proc.kill('SIGTERM');
      // Draining (readyz 503) begins with the workers' stop: once it shows, nothing more is claimed.
      await eventually(async () => (await fetch(`${url}/readyz`)).status === 503, 5000, 20);
      // Still answering (the ready delay), but no longer claiming: this task is left for another process.
      const late = await rpc(url, 'createTask', { queueName: 'drain', name: 'late', target: { url: `${sink.url}/work` } });
      expect(late.body.result?.status).toBe('READY');
      expect((await fetch(`${url}/readyz`)).status).toBe(503);
      const { code, at } = await exited;
      expect(code).toBe(0);
      expect(at - sentAt).toBeLessThan(3000);
      await sql.connect();
      const { rows } = await sql.query(`SELECT name, status::text, "lockedBy", "lastError" FROM "Task" ORDER BY name`);
      expect(rows).toEqual([
        { name: 'held', status: 'READY', lockedBy: null, lastError: 'handed back: the gateway process running it stopped' },
        { name: 'late', status: 'READY', lockedBy: null, lastError: null },
      ]);
      expect(sink.hits.some((h) => h.task === 'late')).toBe(false);
    } finally {
      await child.stop();
      await sql.end().catch(() => undefined);
      sink.release();
      await sink.close();
      await db.drop();
    }
  }, 60_000);
});
