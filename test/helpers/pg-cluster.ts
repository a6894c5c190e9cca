import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';

// A PostgreSQL cluster of the test's own (initdb + pg_ctl from the Debian packages), in a temporary directory on a
// free port, so a test can stop and start the database under running gateways, or give it a streaming replica
// (pg_basebackup -R) to promote. PostgreSQL refuses to run as root: when the tests run as root (CI), the cluster's
// commands run as the `postgres` user.

export interface PgCluster {
  port: number;
  /** A URL of a database of this cluster. */
  url(database?: string): string;
  /** pg_ctl stop: "fast" disconnects clients cleanly; "immediate" kills the server as a crash would. */
  stop(mode: 'fast' | 'immediate'): void;
  start(): void;
  /** SIGSTOP to the postmaster and every backend: the server takes connections (the kernel does) and answers nothing. */
  freeze(): void;
  /** SIGCONT to the processes freeze() stopped. */
  thaw(): void;
  createDatabase(name: string): Promise<string>;
  /** A standby of this cluster only: `pg_ctl promote`, it becomes a primary that takes writes. */
  promote(): void;
  destroy(): void;
}

function binDir(): string {
  const fromPgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const candidates = [
    ...(fromPgConfig.status === 0 ? [fromPgConfig.stdout.trim()] : []),
    ...readdirSync('/usr/lib/postgresql')
      .sort((a, b) => Number(b) - Number(a))
      .map((v) => `/usr/lib/postgresql/${v}/bin`),
  ];
  for (const dir of candidates) if (spawnSync(join(dir, 'initdb'), ['--version']).status === 0) return dir;
  throw new Error('initdb not found: install the Debian package postgresql (initdb and pg_ctl are needed)');
}

/** Runs the server's commands, as the `postgres` user when the tests run as root (PostgreSQL refuses root). */
function commands(): { bin: string; asRoot: boolean; run(cmd: string, args: string[]): void; own(dir: string): void } {
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  return {
    bin,
    asRoot,
    run(cmd, args) {
      const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]] : [join(bin, cmd), args];
      execFileSync(file, argv, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
    },
    own(dir) {
      if (!asRoot) return;
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
    },
  };
}

/** `settings`: more server settings (`name=value`), such as `shared_preload_libraries=pg_stat_statements`. */
export async function startPgCluster(settings: string[] = []): Promise<PgCluster> {
  const cmd = commands();
  const port = await freePort();
  const root = mkdtempSync(join(tmpdir(), 'gw-pg-'));
  cmd.own(root);
  const data = join(root, 'data');
  cmd.run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  return clusterAt(cmd, root, data, port, settings);
}

/**
 * A streaming replica of `primary` (`pg_basebackup -R`: a standby that follows it), on a port of its own. Made for
 * failovers: `promote()` turns it into a primary.
 */
export async function startPgReplica(primary: PgCluster, settings: string[] = []): Promise<PgCluster> {
  const cmd = commands();
  const port = await freePort();
  const root = mkdtempSync(join(tmpdir(), 'gw-pg-replica-'));
  cmd.own(root);
  const data = join(root, 'data');
  cmd.run('pg_basebackup', ['-D', data, '-R', '-X', 'stream', '-c', 'fast', '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres']);
  return clusterAt(cmd, root, data, port, settings);
}

function clusterAt(cmd: ReturnType<typeof commands>, root: string, data: string, port: number, settings: string[]): PgCluster {
  const { run } = cmd;
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200${settings.map((setting) => ` -c ${setting}`).join('')}`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(root, 'log'), '-w', '-t', '60', 'start']);
  start();
  const url = (database = 'postgres') => `postgresql://postgres@127.0.0.1:${port}/${database}`;
  let frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
    frozen = [];
  };
  return {
    port,
    url,
    stop: (mode) => run('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']),
    start,
    freeze() {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      frozen = [postmaster, ...childrenOf(postmaster)];
      for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    },
    thaw,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      await client.query(`CREATE DATABASE "${name}"`);
      await client.end();
      return url(name);
    },
    promote: () => run('pg_ctl', ['-D', data, '-w', '-t', '60', 'promote']),
    destroy() {
      thaw();
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        /* already stopped */
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The pids whose parent is `parent` (from /proc: every PostgreSQL process is a child of its postmaster). */
function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after its last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      /* ended meanwhile */
    }
  }
  return children;
}
