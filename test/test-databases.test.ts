import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';
import { readMigrations } from '../src/db/migration-files.js';
import { freshDatabase } from './helpers/databases.js';
import { NO_WORKERS } from './helpers/gateway.js';

// Embedded test databases are copies of one migrated template (test/helpers/pglite-template.ts). The gateway's own
// start-up still checks them; an embedded database that is not a copy is still migrated from scratch.

async function startLogged(env: Record<string, string>) {
  const lines: { msg?: string; applied?: string[] }[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(...String(chunk).split('\n').filter(Boolean).map((l) => JSON.parse(l))), done()) });
  const gateway = await startGateway(loadConfig({ PORT: '0', HOST: '127.0.0.1', AUTH: 'off', IDENTITY_DEMO_DATA: 'off', ...NO_WORKERS, ...env }), { log: pino({ level: 'info' }, sink) });
  return { gateway, lines };
}

describe('embedded test databases', () => {
  const names = readMigrations().migrationDirectories.map((d) => d.path);

  it('a copy of the template has every migration applied: start-up finds none pending, /readyz reports migrations ok', async () => {
    const db = await freshDatabase('pglite');
    const { gateway, lines } = await startLogged(db.env);
    try {
      expect(lines.filter((l) => l.msg === 'migrations applied')).toEqual([]);
      const rows = await gateway.services.db.$queryRawUnsafe<{ name: string }[]>(
        `SELECT migration_name AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY 1`,
      );
      expect(rows.map((r) => r.name)).toEqual(names);
      expect(await (await fetch(`${gateway.url}/readyz`)).json()).toMatchObject({ status: 'ready', checks: { migrations: 'ok' } });
      expect(await gateway.services.db.queue.count()).toBe(0);
    } finally {
      await gateway.close();
      await db.drop();
    }
  });

  it('an embedded database that is not a copy is migrated from scratch at start-up', async () => {
    const { gateway, lines } = await startLogged({ DATA_DIR: 'memory://from-scratch' });
    try {
      expect(lines.filter((l) => l.msg === 'migrations applied').map((l) => l.applied)).toEqual([names]);
    } finally {
      await gateway.close();
    }
  });
});
