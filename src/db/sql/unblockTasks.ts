import type { PrismaClient } from '../../generated/prisma/client.js';
import { statusAllows } from './taskStatusSql.js';
import { announceTaskChanges } from './taskEvents.js';

/** BLOCKED tasks whose schedule time has come and whose dependencies all SUCCEEDED become READY; answers how many. */
export async function unblockTasks(db: PrismaClient): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
    unblocked AS (
      UPDATE "Task" t SET status = 'READY', "availableAt" = greatest(t."availableAt", clock.now), "updateTime" = clock.now
      FROM clock
      WHERE ${statusAllows('t.status', 'unblock')}
        AND (t."scheduleTime" IS NULL OR t."scheduleTime" <= clock.now)
        AND NOT EXISTS (
          SELECT 1 FROM unnest(t."dependsOn") AS d(name)
          LEFT JOIN "Task" dep ON dep."queueName" = t."queueName" AND dep.name = d.name
          WHERE dep.status IS DISTINCT FROM 'SUCCEEDED'
        )
      RETURNING t."queueName", t.name, t.status
    ),
    announced AS (${announceTaskChanges('unblocked')})
    SELECT (SELECT count(*) FROM unblocked)::int AS n FROM announced`;
  return rows[0]?.n ?? 0;
}
