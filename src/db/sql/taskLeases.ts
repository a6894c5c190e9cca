import type { PrismaClient } from '../../generated/prisma/client.js';
import { idIn } from './idIn.js';
import { statusAllows } from './taskStatusSql.js';
import { announceTaskChanges } from './taskEvents.js';

/** Extends the leases `workerId` holds on `ids`; answers the ids it still holds. */
export async function renewTaskLeases(db: PrismaClient, ids: string[], workerId: string, leaseSeconds: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.$queryRaw<{ id: string }[]>`
    UPDATE "Task" SET "lockedUntil" = (now() AT TIME ZONE 'UTC') + make_interval(secs => ${leaseSeconds}::int)
    WHERE ${idIn('id', ids)} AND "lockedBy" = ${workerId} AND status = 'RUNNING'
    RETURNING id::text AS id`;
  return rows.map((row) => row.id);
}

/** Graceful stop: RUNNING tasks `workerId` holds go back to READY at once, the unfinished attempt not counted. */
export async function handBackTasks(db: PrismaClient, ids: string[], workerId: string): Promise<number> {
  if (ids.length === 0) return 0;
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
    handed AS (
      UPDATE "Task" t SET status = 'READY', attempts = greatest(t.attempts - 1, 0), "lockedBy" = NULL, "lockedUntil" = NULL,
        "availableAt" = clock.now, "lastError" = 'handed back: the gateway process running it stopped', "updateTime" = clock.now
      FROM clock
      WHERE ${idIn('t.id', ids)} AND t."lockedBy" = ${workerId} AND ${statusAllows('t.status', 'handBack')}
      RETURNING t."queueName", t.name, t.status
    ),
    announced AS (${announceTaskChanges('handed')})
    SELECT (SELECT count(*) FROM handed)::int AS n FROM announced`;
  return rows[0]?.n ?? 0;
}
