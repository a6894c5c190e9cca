import type { PrismaClient } from '../generated/prisma/client.js';
import { pendingMigrationNames } from '../db/migrations.js';
import { appliedMigrations } from '../db/sql/appliedMigrations.js';
import { pingDatabase } from '../db/sql/pingDatabase.js';
import type { LoopRegistry } from './supervised-loop.js';

// Whether this process is doing its job: the database answers, every migration is applied, the LISTEN connection
// is up, no worker loop is backing off, and it is not draining. Answered to anyone (GET /readyz), so it names the
// failing checks and their states, never what a driver said.

/** How long the database has to answer before it counts as unreachable. */
const PROBE_TIMEOUT_MS = 2000;

export interface Readiness {
  ok: boolean;
  /** Names of the failing checks: database, migrations, listener, worker:<loop>, draining. */
  failing: string[];
  checks: Record<string, unknown>;
}

export function createReadiness(parts: { db: PrismaClient; bus: { readonly connected: boolean }; loops: LoopRegistry; draining: () => boolean }) {
  return async function readiness(): Promise<Readiness> {
    const databaseOk = await pingDatabase(parts.db, PROBE_TIMEOUT_MS);
    const pending = databaseOk ? pendingMigrationNames(await appliedMigrations(parts.db)).length : 0;
    const listenerOk = parts.bus.connected;
    const draining = parts.draining();
    const workers = Object.fromEntries(parts.loops.statuses().map((l) => [l.name, l.state]));
    const failing = [
      ...(databaseOk ? [] : ['database']),
      ...(pending ? ['migrations'] : []),
      ...(listenerOk ? [] : ['listener']),
      ...Object.entries(workers)
        .filter(([, state]) => state === 'backing-off')
        .map(([name]) => `worker:${name}`),
      ...(draining ? ['draining'] : []),
    ];
    const checks = {
      database: databaseOk ? 'ok' : 'unreachable',
      migrations: !databaseOk ? 'unknown' : pending ? 'pending' : 'ok',
      listener: listenerOk ? 'ok' : 'disconnected',
      workers,
      draining,
    };
    return { ok: failing.length === 0, failing, checks };
  };
}
