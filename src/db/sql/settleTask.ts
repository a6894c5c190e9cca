import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { TaskAction } from '../task-transitions.js';
import { statusAllows } from './taskStatusSql.js';
import { announceTaskChanges } from './taskEvents.js';
import { ATTEMPT_ANSWER_LIMIT } from '../task-attempts.js';
import { endedAttempt, keptAttempts } from './taskHistory.js';

export interface TaskSettlement {
  action: Extract<TaskAction, 'succeed' | 'retry' | 'fail'>;
  lastError: string | null;
  result: unknown;
  /** retry only: how long before the task may be claimed again. */
  delayMs: number;
}

const STATUS_AFTER = { succeed: 'SUCCEEDED', retry: 'READY', fail: 'FAILED' } as const;
/** What an attempt came to, as TaskAttempt.outcome keeps it. */
const OUTCOME = { succeed: 'SUCCEEDED', retry: 'RETRY', fail: 'FAILED' } as const;
const ACTIONS = Object.keys(STATUS_AFTER) as TaskSettlement['action'][];
/** The task's history with the attempt the settle ends (from the `v` row of its settlement) first. */
const HISTORY_AFTER_SETTLE = keptAttempts(
  endedAttempt({
    outcome: Prisma.sql`v.outcome`,
    statusCode: Prisma.sql`CASE WHEN jsonb_typeof(v.result->'statusCode') = 'number' THEN (v.result->>'statusCode')::int END`,
    error: Prisma.sql`v."lastError"`,
    answer: Prisma.sql`left(v.result->>'body', ${ATTEMPT_ANSWER_LIMIT}::int)`,
  }),
);

/**
 * Ends attempts, each only while `workerId` still holds that task's lease, in ONE statement (the dispatcher settles
 * the attempts that finished while its previous settle ran). Answers the ids it settled; the others' leases were lost.
 */
export async function settleTasks(db: PrismaClient, workerId: string, items: readonly { id: string; settlement: TaskSettlement }[]): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  return new Set((await settleTasksStatement(db, workerId, items)).map((r) => r.id));
}

/** The statement of `settleTasks` (never with no items), to run alone or in a batch transaction; answers the settled ids. */
export function settleTasksStatement(db: PrismaClient, workerId: string, items: readonly { id: string; settlement: TaskSettlement }[]): Prisma.PrismaPromise<{ id: string }[]> {
  return db.$queryRaw<{ id: string }[]>`
    WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
    ${settleCtes(workerId, items)},
    announced AS (${announceTaskChanges('settled')})
    SELECT s.id::text AS id FROM settled s, announced`;
}

/**
 * The CTEs of a settle, after a `clock` CTE: `settled` holds the rows it ended (id, "queueName", name, status). Each
 * ended attempt goes into the task's history in the same UPDATE.
 */
export function settleCtes(workerId: string, items: readonly { id: string; settlement: TaskSettlement }[]): Prisma.Sql {
  const values = Prisma.join(
    items.map(({ id, settlement: s }) => {
      const result = s.result === undefined || s.result === null ? null : JSON.stringify(s.result);
      return Prisma.sql`(${id}::uuid, ${s.action}::text, ${STATUS_AFTER[s.action]}::"TaskStatus", ${OUTCOME[s.action]}::text, ${s.lastError}::text, ${result}::jsonb, ${s.delayMs}::float8)`;
    }),
  );
  const allowed = Prisma.join(
    ACTIONS.map((action) => Prisma.sql`(v.action = ${action} AND ${statusAllows('t.status', action)})`),
    ' OR ',
  );
  return Prisma.sql`v (id, action, status, outcome, "lastError", result, "delayMs") AS (VALUES ${values}),
    settled AS (
      UPDATE "Task" t SET
        status = v.status,
        "lastError" = v."lastError",
        result = v.result,
        "availableAt" = clock.now + make_interval(secs => v."delayMs" / 1000.0),
        "lockedBy" = NULL, "lockedUntil" = NULL,
        "finishTime" = CASE WHEN v.action = 'retry' THEN NULL ELSE clock.now END,
        "updateTime" = clock.now,
        history = ${HISTORY_AFTER_SETTLE}
      FROM v, clock
      WHERE t.id = v.id AND t."lockedBy" = ${workerId} AND (${allowed})
      RETURNING t.id, t."queueName", t.name, t.status
    )`;
}
