import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { idIn } from './idIn.js';
import { statusAllows } from './taskStatusSql.js';
import { announceTaskChanges } from './taskEvents.js';

// The statements that cancel, restart and purge tasks already picked by id, one task (cancelTask, restartTask) or a
// thousand (the bulk actions): each re-checks the status under the row lock it takes (a task that moved meanwhile is
// left alone), stamps the database's time and announces what it changed in the same statement.

/** What a bulk statement did: the tasks it changed, by queue and name. */
export type Changed = { queueName: string; name: string }[];

type BulkMove = 'cancel' | 'restart';

const SET: Record<BulkMove, string> = {
  cancel: `status = 'CANCELLED', "finishTime" = clock.now, "updateTime" = clock.now`,
  restart: `status = 'READY', attempts = 0, "availableAt" = clock.now, "startTime" = NULL, "finishTime" = NULL, "updateTime" = clock.now`,
};

/** Cancels or restarts the tasks of `ids` whose status still allows it; one statement, announced. */
export async function moveTasks(db: Prisma.TransactionClient | PrismaClient, action: BulkMove, ids: readonly string[]): Promise<Changed> {
  if (ids.length === 0) return [];
  const [row] = await db.$queryRaw<{ changed: Changed | null }[]>`
    WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
    moved AS (
      UPDATE "Task" t SET ${Prisma.raw(SET[action])}
      FROM clock
      WHERE ${idIn('t.id', ids)} AND ${statusAllows('t.status', action)}
      RETURNING t."queueName", t.name, t.status
    ),
    announced AS (${announceTaskChanges('moved')})
    SELECT (SELECT json_agg(json_build_object('queueName', m."queueName", 'name', m.name)) FROM moved m) AS changed FROM announced`;
  return row?.changed ?? [];
}

/**
 * Deletes the tasks of `ids` that have ended, except one a BLOCKED task of its queue still depends on (the dependent
 * would wait for it forever); announced, each `task` event with the status it ended in.
 */
export async function purgeTasks(db: Prisma.TransactionClient | PrismaClient, ids: readonly string[]): Promise<Changed> {
  if (ids.length === 0) return [];
  const [row] = await db.$queryRaw<{ changed: Changed | null }[]>`
    WITH purged AS (
      DELETE FROM "Task" t
      WHERE ${idIn('t.id', ids)} AND ${statusAllows('t.status', 'purge')}
        AND NOT EXISTS (
          SELECT 1 FROM "Task" w WHERE w."queueName" = t."queueName" AND w.status = 'BLOCKED' AND t.name = ANY (w."dependsOn")
        )
      RETURNING t."queueName", t.name, t.status
    ),
    announced AS (${announceTaskChanges('purged')})
    SELECT (SELECT json_agg(json_build_object('queueName', p."queueName", 'name', p.name)) FROM purged p) AS changed FROM announced`;
  return row?.changed ?? [];
}
