import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';
import { gql } from './helpers/gateway.js';
import { freshDatabase } from './helpers/databases.js';
import { eventually } from './helpers/sink.js';

// The processes an operator runs: `keys` (create, list, revoke) and `serve` stopped by SIGTERM.

const ROOT = resolve(import.meta.dirname, '..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-ops-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.filter(Boolean).forEach((d) => rmSync(d, { recursive: true, force: true })));

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(TSX, ['src/main.ts', ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolvePromise({ code, stdout, stderr }));
  });
}

describe('keys CLI', () => {
  it('creates a key (printed once, on stdout), lists it without the secret, refuses bad scopes, revokes it', async () => {
    // On PostgreSQL: the embedded database's first start (initdb) takes too long for four processes here.
    const db = await freshDatabase('postgres');
    dirs.push('');
    const env = { ...db.env, AUTH: 'on' };
    const created = await run(['keys', 'create', '--name', 'ops team', '--scopes', 'queues:read,queues:write', '--system', 'sys-9'], env);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^gw_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toContain('shown only now');
    const bad = await run(['keys', 'create', '--name', 'x', '--scopes', 'queues:reed'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('"queues:reed" is not a scope of this gateway');
    const listed = await run(['keys', 'list'], env);
    expect(listed.stdout).toContain('ops team');
    expect(listed.stdout).toContain('queues:read,queues:write');
    expect(listed.stdout).not.toContain(key.slice(16));

    const gateway = await startGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', ...env }), { log: pino({ level: 'silent' }) });
    try {
      expect((await gql(gateway.url, '{ queues { totalCount } }', {}, { authorization: `Bearer ${key}` })).status).toBe(200);
      expect((await gql(gateway.url, '{ apiKeys { totalCount } }', {}, { authorization: `Bearer ${key}` })).status).toBe(403);
    } finally {
      await gateway.close();
    }
    const revoked = await run(['keys', 'revoke', key.slice(3, 15)], env);
    expect(revoked.stdout).toContain('Revoked');
    const rows = await startGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', ...env }), { log: pino({ level: 'silent' }) });
    try {
      expect((await gql(rows.url, '{ queues { totalCount } }', {}, { authorization: `Bearer ${key}` })).status).toBe(401);
    } finally {
      await rows.close();
    }
    await db.drop();
  }, 150_000);
});

describe('serve and SIGTERM', () => {
  it('reports not ready while draining, exits 0 within the grace time and releases the embedded database', async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', SHUTDOWN_READY_DELAY_MS: '600', SHUTDOWN_GRACE_MS: '5000' };
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
    const again = await startGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir }), { log: pino({ level: 'silent' }) });
    await again.close();
  }, 60_000);
});

describe('shutdown phases side by side (PostgreSQL)', () => {
  it('stops claiming at SIGTERM, keeps answering through the ready delay, and hands a running task back before the grace time ends', async () => {
    const { startGatewayProcess } = await import('./helpers/process.js');
    const { startTaskSink } = await import('./helpers/task-sink.js');
    const { rpc } = await import('./helpers/gateway.js');
    const { eventually } = await import('./helpers/sink.js');
    const pg = (await import('pg')).default;
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
