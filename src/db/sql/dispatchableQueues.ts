import type { PrismaClient } from '../../generated/prisma/client.js';

/**
 * What the dispatcher may do now: the OPEN, unpaused queues holding a runnable task (READY and due, or RUNNING
 * with an expired lease), and the next instant something becomes due anywhere (a schedule time, a backoff's end,
 * a lease's expiry), so that it sleeps exactly until then when nothing wakes it sooner.
 */
export async function dispatchableQueues(db: PrismaClient): Promise<{ queues: string[]; nextDueAt: Date | null }> {
  const [row] = await db.$queryRaw<{ queues: string[] | null; nextDueAt: Date | null }[]>`
    WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now)
    SELECT
      (SELECT array_agg(q.name ORDER BY q.name) FROM "Queue" q, clock
        WHERE q.status = 'OPEN' AND NOT q.paused AND EXISTS (
          SELECT 1 FROM "Task" t
          WHERE t."queueName" = q.name
            AND ((t.status = 'READY' AND t."availableAt" <= clock.now) OR (t.status = 'RUNNING' AND t."lockedUntil" < clock.now))
        )) AS queues,
      least(
        (SELECT min(t."availableAt") FROM "Task" t, clock WHERE t.status = 'READY' AND t."availableAt" > clock.now),
        (SELECT min(t."scheduleTime") FROM "Task" t, clock WHERE t.status = 'BLOCKED' AND t."scheduleTime" > clock.now),
        (SELECT min(t."lockedUntil") FROM "Task" t, clock WHERE t.status = 'RUNNING' AND t."lockedUntil" >= clock.now)
      ) AS "nextDueAt"`;
  return { queues: row?.queues ?? [], nextDueAt: row?.nextDueAt ?? null };
}
