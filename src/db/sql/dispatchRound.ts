import type { PrismaClient } from '../../generated/prisma/client.js';
import { statusAllows } from './taskStatusSql.js';
import { announceTaskChanges } from './taskEvents.js';

export interface DispatchRound {
  /**
   * OPEN, unpaused queues with a free rate slot and a runnable task (READY and due, or RUNNING with an expired lease),
   * by name, with their per-process cap (null: the process's default share).
   */
  queues: { name: string; maxConcurrentDispatches: number | null }[];
  /**
   * Milliseconds from the database's now() to the next instant something becomes due anywhere (a schedule time, a
   * backoff's end, a lease's expiry), or null: the process sleeps that long whatever its own clock says.
   */
  untilDueMs: number | null;
  /** BLOCKED tasks this statement made READY; they are runnable from the next round on. */
  unblocked: number;
}

/**
 * ONE statement per dispatcher round: BLOCKED tasks whose schedule time has come and whose dependencies all
 * SUCCEEDED become READY (announced), and the queues with runnable tasks and the next due instant are read. The read
 * shares the statement's snapshot, so tasks unblocked here show up in the next round (their announcement wakes it).
 */
export async function dispatchRound(db: PrismaClient): Promise<DispatchRound> {
  const [row] = await db.$queryRaw<{ queues: DispatchRound['queues'] | null; untilDueMs: number | null; unblocked: number }[]>`
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
    SELECT
      (SELECT json_agg(json_build_object('name', q.name, 'maxConcurrentDispatches', q."maxConcurrentDispatches") ORDER BY q.name) FROM "Queue" q, clock
        WHERE q.status = 'OPEN' AND NOT q.paused AND EXISTS (
          SELECT 1 FROM "Task" t
          WHERE t."queueName" = q.name
            AND ((t.status = 'READY' AND t."availableAt" <= clock.now) OR (t.status = 'RUNNING' AND t."lockedUntil" < clock.now))
        ) AND q.rate > (
          -- a hint only (claimTasks counts again under the queue lock): skips a claim that could take nothing
          SELECT count(*) FROM "Task" t WHERE t."queueName" = q.name AND t.status = 'RUNNING' AND t."lockedUntil" >= clock.now
        )) AS queues,
      (extract(epoch FROM least(
        (SELECT min(t."availableAt") FROM "Task" t, clock WHERE t.status = 'READY' AND t."availableAt" > clock.now),
        (SELECT min(t."scheduleTime") FROM "Task" t, clock WHERE t.status = 'BLOCKED' AND t."scheduleTime" > clock.now),
        (SELECT min(t."lockedUntil") FROM "Task" t, clock WHERE t.status = 'RUNNING' AND t."lockedUntil" >= clock.now)
      ) - (SELECT now FROM clock)) * 1000)::float8 AS "untilDueMs",
      (SELECT count(*) FROM unblocked)::int AS unblocked
    FROM announced`;
  return { queues: row?.queues ?? [], untilDueMs: row?.untilDueMs ?? null, unblocked: row?.unblocked ?? 0 };
}
