import type { PrismaClient } from '../generated/prisma/client.js';
import { migrationState } from '../db/startup.js';
import { pingDatabase } from '../db/sql/pingDatabase.js';
import { untilDeadline } from '../kit/deadline.js';
import type { LoopRegistry } from '../kit/supervised-loop.js';

// Whether this process is doing its job: the database answers, every migration is applied, the LISTEN connection
// is up, no worker loop is backing off or stalled (a round past its deadline), and it is not draining. Answered to anyone (GET /readyz), so it names the
// failing checks and their states, never what a driver said; and answered within its own deadline, whatever the
// database does.

/** How long the database has to answer before it counts as unreachable (or its pool as saturated). */
const PROBE_TIMEOUT_MS = 2000;
/** The migrations' look-up gets what is left of this after the probe. */
const READINESS_DEADLINE_MS = 3000;

/** What the pool every request uses holds now (PostgreSQL only). */
export interface PoolStats {
  total: number;
  waiting: number;
  max: number;
}

export interface Readiness {
  ok: boolean;
  /** Names of the failing checks: database, migrations, listener, disk, worker:<loop>, draining. */
  failing: string[];
  checks: Record<string, unknown>;
}

/** The embedded database's disk (src/db/disk-guard.ts). */
export interface DiskStatus {
  state(): 'ok' | 'low' | 'failed';
  freeBytes(): number | undefined;
  readonly minFreeBytes: number;
}

export function createReadiness(parts: { db: PrismaClient; pool?: () => PoolStats; disk?: DiskStatus; bus: { readonly connected: boolean }; loops: LoopRegistry; draining: () => boolean }) {
  return async function readiness(): Promise<Readiness> {
    const started = Date.now();
    const answer = await pingDatabase(parts.db, PROBE_TIMEOUT_MS);
    const answered = answer !== 'no-answer';
    // No answer while every connection is busy and requests queue for one: this process is saturated, which another
    // process (or this one, later) may not be; the database may well be fine.
    const pool = parts.pool?.();
    const database = answered ? answer : pool && pool.waiting > 0 && pool.total >= pool.max ? 'pool-saturated' : 'unreachable';
    let migrations: 'ok' | 'pending' | 'unknown' = 'unknown';
    if (answered) {
      let pending: number | undefined;
      await untilDeadline(
        migrationState(parts.db).then((state) => (pending = state.pending.length)),
        READINESS_DEADLINE_MS - (Date.now() - started),
      );
      if (pending !== undefined) migrations = pending ? 'pending' : 'ok';
    }
    const workers = Object.fromEntries(parts.loops.statuses().map((l) => [l.name, l.state]));
    const backingOff = Object.entries(workers)
      .filter(([, state]) => state === 'backing-off')
      .map(([name]) => `worker:${name}`);
    // A round abandoned at its deadline waited on something that does not answer, which a read-only database does not
    // explain: named whatever the database says.
    const stalled = Object.entries(workers)
      .filter(([, state]) => state === 'stalled')
      .map(([name]) => `worker:${name}`);
    // The database answers writes again: loops still waiting out a back-off try now rather than at its end.
    if (answer === 'ok' && (backingOff.length || stalled.length)) parts.loops.pollAll();
    const listenerOk = parts.bus.connected;
    const draining = parts.draining();
    const diskLow = parts.disk?.state() === 'low';
    const failing = [
      ...(answered ? [] : ['database']),
      ...(answered && migrations !== 'ok' ? ['migrations'] : []),
      ...(listenerOk ? [] : ['listener']),
      ...(parts.disk?.state() === 'failed' ? ['disk'] : []),
      // A read-only database is named but does not fail readiness, nor do the workers it holds back: reads are served,
      // and every process shares the one database, so taking them all out of the load balancer would refuse the
      // reads too (docs/operations.md). A nearly full disk of the embedded database is the same: writes are refused,
      // reads served.
      ...(answer === 'read-only' || diskLow ? [] : backingOff),
      ...stalled,
      ...(draining ? ['draining'] : []),
    ];
    const disk = parts.disk && { state: parts.disk.state(), freeBytes: parts.disk.freeBytes() ?? null, minFreeBytes: parts.disk.minFreeBytes };
    const checks = { database, migrations, listener: listenerOk ? 'ok' : 'disconnected', ...(disk && { disk }), workers, draining };
    return { ok: failing.length === 0, failing, checks };
  };
}
