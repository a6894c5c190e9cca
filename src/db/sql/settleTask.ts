import type { PrismaClient } from '../../generated/prisma/client.js';
import type { TaskAction } from '../../tasks/task-rules.js';
import { statusAllows } from './taskStatusSql.js';
import { announceTaskChanges } from './taskEvents.js';

export interface TaskSettlement {
  action: Extract<TaskAction, 'succeed' | 'retry' | 'fail'>;
  lastError: string | null;
  result: unknown;
  /** retry only: how long before the task may be claimed again. */
  delayMs: number;
}

const STATUS_AFTER = { succeed: 'SUCCEEDED', retry: 'READY', fail: 'FAILED' } as const;

/** Ends an attempt, only while `workerId` still holds the task's lease; false when it no longer does. */
export async function settleTask(db: PrismaClient, id: string, workerId: string, s: TaskSettlement): Promise<boolean> {
  const status = STATUS_AFTER[s.action];
  const final = s.action !== 'retry';
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
    settled AS (
      UPDATE "Task" t SET
        status = ${status}::"TaskStatus",
        "lastError" = ${s.lastError},
        result = ${s.result === undefined || s.result === null ? null : JSON.stringify(s.result)}::jsonb,
        "availableAt" = clock.now + make_interval(secs => ${s.delayMs}::float8 / 1000.0),
        "lockedBy" = NULL, "lockedUntil" = NULL,
        "finishTime" = CASE WHEN ${final} THEN clock.now ELSE NULL END,
        "updateTime" = clock.now
      FROM clock
      WHERE t.id = ${id}::uuid AND t."lockedBy" = ${workerId} AND ${statusAllows('t.status', s.action)}
      RETURNING t."queueName", t.name, t.status
    ),
    announced AS (${announceTaskChanges('settled')})
    SELECT (SELECT count(*) FROM settled)::int AS n FROM announced`;
  return (rows[0]?.n ?? 0) > 0;
}
