import type { PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

export const LOST_INSTANCE_ERROR = 'lost: the gateway process running it stopped before it finished';

/**
 * Fails RUNNING instances whose lease ran out by the database's clock (their process died mid-run), in one statement,
 * and announces their jobs on topic jobInstance. Answers how many were failed.
 */
export async function reapJobInstances(db: PrismaClient): Promise<number> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH reaped AS (
      UPDATE "JobInstance"
      SET status = 'FAILED', error = ${LOST_INSTANCE_ERROR}, "finishTime" = now() AT TIME ZONE 'UTC',
          "updateTime" = now() AT TIME ZONE 'UTC', "lockedBy" = NULL, "lockedUntil" = NULL
      WHERE status = 'RUNNING' AND "lockedUntil" < now() AT TIME ZONE 'UTC'
      RETURNING "jobName"
    ), jobs AS (
      SELECT "jobName", (sum(length("jobName") + 3) OVER (ORDER BY "jobName") / 7000)::int AS chunk FROM (SELECT DISTINCT "jobName" FROM reaped) d
    ), notified AS (
      SELECT count(*) AS n FROM (
        SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'jobInstance', 'keys', json_agg("jobName"))::text) FROM jobs GROUP BY chunk
      ) x
    )
    SELECT (SELECT count(*) FROM reaped)::int AS n, (SELECT n FROM notified) AS notified`;
  return rows[0]?.n ?? 0;
}
