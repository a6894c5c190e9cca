import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';
import { gql } from './helpers/gateway.js';
import { freshDatabase } from './helpers/databases.js';

// The processes an operator runs: `keys` (create, list, revoke). `serve` stopped by SIGTERM, which must end in time, is
// in shutdown-deadlines.test.ts, which runs alone.

const ROOT = resolve(import.meta.dirname, '..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');

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
