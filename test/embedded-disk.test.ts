import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';
import { migratedPgliteTemplate } from './helpers/pglite-template.js';
import { gql, rpc, NO_WORKERS } from './helpers/gateway.js';
import { isWriteStatement } from '../src/db/disk-guard.js';
import { startGatewayProcess } from './helpers/process.js';

// The embedded database on a disk that fills up: a size-limited tmpfs as DATA_DIR's disk, a filler file as "something
// else filled it". Mounting needs root (CI runs as root); elsewhere the file says it skipped and why.

const isRoot = process.getuid?.() === 0;
const ROOT = resolve(import.meta.dirname, '..');
const MiB = 1024 * 1024;
const mounts: string[] = [];

function mountTmpfs(sizeMiB: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of mounts) {
    try {
      execFileSync('umount', [dir]);
    } catch {
      execFileSync('umount', ['-l', dir]);
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

/** Writes a file of zeros until the disk of `dir` has about `leaveBytes` free (0: until it is full). */
function fill(dir: string, leaveBytes: number, name = 'filler'): string {
  const path = join(dir, name);
  const fd = openSync(path, 'a');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) {
      const room = freeBytes(dir) - leaveBytes;
      if (room <= 0) break;
      writeSync(fd, chunk, 0, Math.min(chunk.length, room));
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return path;
}

/** A DATA_DIR on its own small disk holding a copy of the migrated template database. */
async function dataDirOnTmpfs(sizeMiB: number): Promise<string> {
  const dataDir = join(mountTmpfs(sizeMiB), 'data');
  mkdirSync(dataDir);
  cpSync(await migratedPgliteTemplate(), join(dataDir, 'pg'), { recursive: true });
  return dataDir;
}

function start(dataDir: string, env: Record<string, string> = {}): Promise<Gateway> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AUTH: 'off', GRAPHIQL: 'off', IDENTITY_DEMO_DATA: 'off', DATA_DIR: dataDir, ...env });
  return startGateway(config, { log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
}

/** `work`, or a rejection naming `what` once `ms` passed (a gateway that stopped answering fails the test, not its timeout). */
function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await run();
  return { value, ms: performance.now() - started };
}

const description = 'd'.repeat(1000);

describe.skipIf(!isRoot)('embedded database on a full disk (tmpfs; needs root)', () => {
  it('refuses writes below EMBEDDED_MIN_FREE_BYTES with a bounded 503, serves reads, recovers when space is freed, loses nothing', async () => {
    const floor = 4 * MiB;
    const dataDir = await dataDirOnTmpfs(64);
    const disk = join(dataDir, '..');
    const env = { EMBEDDED_MIN_FREE_BYTES: String(floor) };
    let gateway = await start(dataDir, env);
    const acked: string[] = [];
    try {
      expect((await rpc(gateway.url, 'createQueue', { name: 'before' })).body.result.name).toBe('before');
      acked.push('before');

      // The gateway's own writes take the disk down to the floor: each is acknowledged or refused, quickly.
      fill(disk, floor + 256 * 1024);
      let refused: Awaited<ReturnType<typeof rpc>> | undefined;
      for (let i = 0; i < 3000 && !refused; i++) {
        const { value: answer, ms } = await timed(() => rpc(gateway.url, 'createQueue', { name: `w-${i}`, description }));
        expect(ms).toBeLessThan(2000);
        if (answer.body.result) acked.push(answer.body.result.name);
        else refused = answer;
      }
      expect(acked.length).toBeGreaterThan(5);
      expect(refused).toBeDefined();
      expect(refused!.status).toBe(503);
      expect(refused!.body.error).toMatchObject({ code: -32050, data: { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 30 } });
      expect(refused!.body.error.message).toMatch(/disk .*nearly full/);
      expect(freeBytes(disk)).toBeGreaterThan(floor / 2); // refused before the database met the full disk

      // GraphQL says the same; reads, /healthz and /readyz answer; the metric shows the free bytes.
      const { value: mutation, ms } = await timed(() => gql(gateway.url, 'mutation { createQueue(input: {name: "gql"}) { name } }'));
      expect(ms).toBeLessThan(2000);
      expect(mutation.status).toBe(503);
      expect(mutation.errors![0]).toMatchObject({ message: expect.stringMatching(/disk .*nearly full/), extensions: { code: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 30 } });
      expect((await rpc(gateway.url, 'getQueue', { name: 'before' })).body.result.name).toBe('before');
      const listed = await gql(gateway.url, '{ queues(first: 5) { nodes { name } } }');
      expect(listed.status).toBe(200);
      expect(listed.data!.queues.nodes.length).toBe(5);
      const health = await timed(() => fetch(`${gateway.url}/healthz`));
      expect(health.value.status).toBe(200);
      expect(health.ms).toBeLessThan(1000);
      const ready = await fetch(`${gateway.url}/readyz`);
      const readyBody = (await ready.json()) as { failing: string[]; checks: { disk: { state: string; freeBytes: number; minFreeBytes: number } } };
      expect(ready.status).toBe(200); // reads are served: not taken out of the load balancer
      expect(readyBody.checks.disk).toMatchObject({ state: 'low', minFreeBytes: floor });
      expect(readyBody.checks.disk.freeBytes).toBeLessThan(floor);
      const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
      const free = Number(/^gateway_embedded_disk_free_bytes (\d+)/m.exec(metrics)?.[1]);
      expect(free).toBeGreaterThan(0);
      expect(free).toBeLessThan(floor);
      expect(metrics).toMatch(new RegExp(`^gateway_embedded_disk_min_free_bytes ${floor}$`, 'm'));

      // Space freed: writes are taken again, by themselves, within a few seconds.
      rmSync(join(disk, 'filler'));
      const deadline = Date.now() + 3000;
      let back = await rpc(gateway.url, 'createQueue', { name: 'after' });
      while (!back.body.result && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        back = await rpc(gateway.url, 'createQueue', { name: 'after' });
      }
      expect(back.body.result?.name).toBe('after');
      acked.push('after');
      const readyAgain = (await (await fetch(`${gateway.url}/readyz`)).json()) as { checks: { disk: { state: string } } };
      expect(readyAgain.checks.disk.state).toBe('ok');
    } finally {
      await gateway.close();
    }

    // A start on a disk below the floor declines in one line and changes nothing; with space, every acknowledged write is there.
    fill(disk, floor / 2);
    await expect(start(dataDir, env)).rejects.toThrow(/DATA_DIR \(.*\) cannot start: its disk has .* free and needs 4\.0 MiB\. Free space/);
    rmSync(join(disk, 'filler'));
    gateway = await start(dataDir, env);
    try {
      const found = await gql(gateway.url, '{ queues(first: 500) { nodes { name } } }');
      const names = new Set((found.data!.queues.nodes as { name: string }[]).map((q) => q.name));
      expect(acked.filter((name) => !names.has(name))).toEqual([]);
    } finally {
      await gateway.close();
    }
  });

  it('a disk filled by something else: writes answer 503 in bounded time, /healthz answers, SIGTERM ends the process, nothing acknowledged is lost', async () => {
    const dataDir = await dataDirOnTmpfs(64);
    const disk = join(dataDir, '..');
    // The floor off: the database itself meets the full disk.
    const child = startGatewayProcess({ DATA_DIR: dataDir, EMBEDDED_MIN_FREE_BYTES: '0', IDENTITY_DEMO_DATA: 'off' });
    const acked: string[] = [];
    try {
      const url = await child.url;
      expect((await rpc(url, 'createQueue', { name: 'kept' })).body.result.name).toBe('kept');
      acked.push('kept');
      fill(disk, 0);
      let failed: Awaited<ReturnType<typeof rpc>> | undefined;
      for (let i = 0; i < 2000 && !failed; i++) {
        const { value: answer, ms } = await timed(() => rpc(url, 'createQueue', { name: `f-${i}`, description }));
        expect(ms).toBeLessThan(5000);
        if (answer.body.result) acked.push(answer.body.result.name);
        else failed = answer;
      }
      expect(failed?.status).toBe(503);
      expect(failed?.body.error).toMatchObject({ code: -32050, data: { code: 'SERVICE_UNAVAILABLE' } });
      expect(failed?.body.error.message).toMatch(/disk .*nearly full/);
      const again = await timed(() => rpc(url, 'createQueue', { name: 'refused', description }));
      expect(again.ms).toBeLessThan(5000);
      expect(again.value.status).toBe(503);
      const health = await timed(() => fetch(`${url}/healthz`));
      expect(health.value.status).toBe(200);
      expect(health.ms).toBeLessThan(1000);
      expect((await rpc(url, 'getQueue', { name: 'kept' })).body.result.name).toBe('kept');

      const exited = new Promise<number | null>((resolve) => child.proc.once('exit', (code) => resolve(code)));
      const stopping = performance.now();
      child.proc.kill('SIGTERM');
      await exited;
      expect(performance.now() - stopping).toBeLessThan(12_000);
    } finally {
      await child.stop();
    }
    rmSync(join(disk, 'filler'));
    const gateway = await start(dataDir, { ...NO_WORKERS, EMBEDDED_MIN_FREE_BYTES: '0' });
    try {
      const found = await gql(gateway.url, '{ queues(first: 500) { nodes { name } } }');
      const names = new Set((found.data!.queues.nodes as { name: string }[]).map((q) => q.name));
      expect(acked.filter((name) => !names.has(name))).toEqual([]);
      expect((await rpc(gateway.url, 'createQueue', { name: 'after-restart' })).body.result.name).toBe('after-restart');
    } finally {
      await gateway.close();
    }
  });

  it('the database meets the full disk at a WAL segment switch: no spin, bounded 503s, /healthz and /readyz answer, the process exits 1 by itself, nothing is lost', { timeout: 60_000 }, async () => {
    const dataDir = await dataDirOnTmpfs(64);
    const disk = join(dataDir, '..');
    const env = { DATA_DIR: dataDir, EMBEDDED_MIN_FREE_BYTES: '0', PORT: '0', HOST: '127.0.0.1', AUTH: 'off', GRAPHIQL: 'off', IDENTITY_DEMO_DATA: 'off', SHUTDOWN_READY_DELAY_MS: '3000', ...NO_WORKERS };
    const proc = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/wal-filler-gateway.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolveExit) => proc.once('exit', (code) => resolveExit(code)));
    const lines: Record<string, any>[] = [];
    const waiters: (() => void)[] = [];
    createInterface({ input: proc.stdout }).on('line', (line) => {
      lines.push(JSON.parse(line) as Record<string, any>);
      waiters.splice(0).forEach((wake) => wake());
    });
    const nextLine = async (what: string, ms: number) => {
      const deadline = Date.now() + ms;
      while (!lines.length) {
        if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms (the database spinning?): ${stderr.slice(-500)}`);
        await new Promise<void>((wake) => {
          waiters.push(wake);
          setTimeout(wake, 200);
        });
      }
      return lines.shift()!;
    };
    try {
      const { url } = (await nextLine('url', 30_000)) as { url: string };
      expect((await rpc(url, 'createQueue', { name: 'kept' })).body.result.name).toBe('kept');
      fill(disk, 4 * MiB); // room for the tables, not for another WAL segment
      proc.stdin.write('fill-wal\n');
      const { filled } = await nextLine('answer of the statement that met the full disk', 20_000);
      expect(filled.disk, JSON.stringify(filled)).toBe('failed');

      // Draining (SHUTDOWN_READY_DELAY_MS): every answer is bounded, none reaches the database.
      for (const call of [() => rpc(url, 'getQueue', { name: 'kept' }), () => rpc(url, 'createQueue', { name: 'refused' })]) {
        const { value: answer, ms } = await timed(() => within(5000, 'a call after the disk filled', call()));
        expect(ms).toBeLessThan(2000);
        expect(answer.status).toBe(503);
        expect(answer.body.error.data.code).toBe('SERVICE_UNAVAILABLE');
      }
      const health = await timed(() => within(5000, '/healthz', fetch(`${url}/healthz`)));
      expect(health.value.status).toBe(200);
      expect(health.ms).toBeLessThan(1000);
      const ready = await within(5000, '/readyz', fetch(`${url}/readyz`));
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { failing: string[] }).failing).toContain('disk');
      const code = await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('still running'), 15_000))]);
      expect(code).toBe(1);
      expect(stderr).toMatch(/met the full disk of DATA_DIR .* Free space on that disk and start the gateway again/);
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    }
    rmSync(join(disk, 'filler'));
    const gateway = await start(dataDir, { ...NO_WORKERS, EMBEDDED_MIN_FREE_BYTES: '0' });
    try {
      expect((await rpc(gateway.url, 'getQueue', { name: 'kept' })).body.result.name).toBe('kept');
      expect(await gateway.database.prisma.$queryRawUnsafe('SELECT count(*)::int AS n FROM wal_filler')).toEqual([{ n: 200 }]);
    } finally {
      await gateway.close();
    }
  });

  it('a main thread blocked for good on a nearly full disk is ended by the watchdog (SIGKILL, one line); with space it is left alone', async () => {
    const run = (dir: string) => {
      const proc = spawn(join(ROOT, 'node_modules/node/bin/node'), ['--import', 'tsx', 'test/helpers/stall-child.ts', dir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const ended = new Promise<string>((resolveEnd) => proc.once('exit', (code, signal) => resolveEnd(String(signal ?? code))));
      const blocking = new Promise<void>((resolveBlocking) => proc.stdout.on('data', () => out.includes('blocking') && resolveBlocking()));
      return { proc, ended, blocking, out: () => out };
    };
    const full = mountTmpfs(8);
    fill(full, 0);
    const spinning = run(full);
    await within(20_000, 'the child to block', spinning.blocking);
    const blockedAt = performance.now();
    expect(await within(6000, 'the watchdog', spinning.ended)).toBe('SIGKILL');
    expect(performance.now() - blockedAt).toBeGreaterThan(500); // a stall of 1 s from the last heartbeat (every 250 ms)
    expect(JSON.parse(spinning.out().split('\n').find((l) => l.startsWith('{'))!)).toMatchObject({ level: 60, msg: expect.stringMatching(/stopped answering: .* MiB free on the disk of DATA_DIR .* Free space on that disk and start the gateway again/) });

    const roomy = mountTmpfs(64);
    const blocked = run(roomy);
    await within(20_000, 'the child to block', blocked.blocking);
    const outcome = await Promise.race([blocked.ended, new Promise<string>((r) => setTimeout(() => r('still running'), 2500))]);
    blocked.proc.kill('SIGKILL');
    await blocked.ended;
    expect(outcome).toBe('still running');
  });

  it('a first start on a disk too small says why and what to do, leaves nothing half-made, and starts once there is room', async () => {
    const mount = mountTmpfs(8);
    const dataDir = join(mount, 'data');
    // Checked before anything is created.
    const declined = await timed(() => start(dataDir).then(() => 'started', (error: Error) => error.message));
    expect(declined.value).toMatch(/^the embedded database in DATA_DIR \(.*\/data\) cannot be created .*: its disk has \d.* MiB free and needs \d+ MiB\. Free space on that disk or set DATA_DIR to a larger one/);
    expect(declined.ms).toBeLessThan(2000);
    expect(readdirSync(dataDir)).toEqual([]);

    // With the floor off, the database tries and meets the full disk: one sentence, and nothing is left behind.
    const failed = await start(dataDir, { EMBEDDED_MIN_FREE_BYTES: '0' }).then(() => 'started', (error: Error) => error.message);
    expect(failed).toMatch(/^the embedded database could not be created in DATA_DIR \(.*\/data\): .*\(the disk of DATA_DIR has .* free\); nothing was left behind/);
    expect(failed).toMatch(/no space left on device \(ENOSPC\)/);
    expect(failed).not.toContain('[object Object]');
    expect(readdirSync(dataDir)).toEqual([]);

    // What a failed first start of an earlier build left (no PG_VERSION: it never started) is made again.
    mkdirSync(join(dataDir, 'pg', 'global'), { recursive: true });
    mkdirSync(join(dataDir, 'pg', 'pg_wal'));
    writeFileSync(join(dataDir, 'pg', 'global', 'pg_control'), 'half');
    execFileSync('mount', ['-o', 'remount,size=128m', mount]);
    const gateway = await start(dataDir);
    try {
      expect((await rpc(gateway.url, 'createQueue', { name: 'first' })).body.result.name).toBe('first');
    } finally {
      await gateway.close();
    }
    expect(readdirSync(dataDir)).toEqual(['pg']);
  });
});

describe('which statements the disk guard refuses on a nearly full disk', () => {
  it('refuses what stores (data changes, DDL, maintenance, a WITH holding a change) and lets reads and transaction control pass', () => {
    const writes = ['INSERT INTO "Queue" VALUES (1)', '  update t set v = 1', '/* c */ DELETE FROM t', '-- c\nMERGE INTO t USING s ON true WHEN MATCHED THEN DELETE', 'CREATE TABLE t (id int)', 'ALTER TABLE t ADD c int', 'DROP TABLE t', 'TRUNCATE t', 'VACUUM', 'COPY t FROM STDIN', 'WITH c AS (UPDATE t SET v = 1 RETURNING id) SELECT * FROM c'];
    const reads = ['SELECT 1', ' select * from "Queue" where name = $1', 'WITH c AS (SELECT 1) SELECT * FROM c', 'BEGIN', 'COMMIT', 'ROLLBACK', 'SET LOCAL statement_timeout = 5', 'SHOW server_version', 'LISTEN x', 'SELECT "updatedAt" FROM t'];
    expect(writes.filter((sql) => !isWriteStatement(sql))).toEqual([]);
    expect(reads.filter((sql) => isWriteStatement(sql))).toEqual([]);
  });
});

describe.skipIf(isRoot)('embedded database on a full disk', () => {
  it.skip('skipped: mounting a size-limited tmpfs needs root (CI runs these as root)', () => undefined);
});
