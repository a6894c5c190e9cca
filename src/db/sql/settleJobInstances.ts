import type { PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

export interface Settlement {
  id: string;
  status: 'SUCCEEDED' | 'FAILED';
  /** ISO instant the instance finished. */
  finishTime: string;
  attempts: number;
  /** JSON text of what the target answered, or null. */
  result: string | null;
  error: string | null;
}

/**
 * Settles a batch of instances in one statement; only instances still RUNNING under this process's lease change
 * (0 rows for one = its lease was lost: it was settled elsewhere or deleted). Announces each job on jobInstance.
 * Answers the ids that were settled.
 */
export async function settleJobInstances(db: PrismaClient, me: string, settlements: Settlement[]): Promise<string[]> {
  const rows = await db.$queryRaw<{ id: string }[]>`
    WITH s AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(settlements)}::jsonb)
        AS s(id text, status text, "finishTime" timestamptz, attempts int, result text, error text)
    ), settled AS (
      UPDATE "JobInstance" i
      SET status = s.status::"JobInstanceStatus", "finishTime" = s."finishTime" AT TIME ZONE 'UTC',
          "updateTime" = now() AT TIME ZONE 'UTC', attempts = s.attempts, result = s.result::jsonb, error = s.error, "lockedBy" = NULL, "lockedUntil" = NULL
      FROM s
      WHERE i.id = s.id AND i."lockedBy" = ${me} AND i.status = 'RUNNING'
      RETURNING i.id, i."jobName"
    ), jobs AS (
      SELECT "jobName", (sum(length("jobName") + 3) OVER (ORDER BY "jobName") / 7000)::int AS chunk FROM (SELECT DISTINCT "jobName" FROM settled) d
    ), notified AS (
      SELECT count(*) AS n FROM (
        SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'jobInstance', 'keys', json_agg("jobName"))::text) FROM jobs GROUP BY chunk
      ) x
    )
    SELECT settled.id FROM settled, notified`;
  return rows.map((r) => r.id);
}
