import { Prisma } from '../../generated/prisma/client.js';
import { ATTEMPT_HISTORY } from '../task-attempts.js';

/**
 * `t.history` (SET expression of an UPDATE of "Task" t) with `attempt` (a jsonb object) first, cut to the last
 * ATTEMPT_HISTORY: kept on the task's own row, written by the UPDATE that ends the attempt. A table of attempts cost a
 * row, an index entry and a foreign-key check per attempt: 10-15% of bench:tasks' throughput.
 */
export function keptAttempts(attempt: Prisma.Sql): Prisma.Sql {
  // Cut only when full: most tasks end in an attempt or two, and the path query is the dearer part.
  return Prisma.sql`CASE WHEN jsonb_array_length(t.history) < ${ATTEMPT_HISTORY}::int THEN jsonb_build_array(${attempt}) || t.history
    ELSE jsonb_path_query_array(jsonb_build_array(${attempt}) || t.history, ${Prisma.raw(`'$[0 to ${ATTEMPT_HISTORY - 1}]'`)}) END`;
}

/**
 * One ended attempt as Task.history stores it (read back by src/schema/tasks.ts, StoredAttempt): its number, start
 * and end from the row before the UPDATE (SET expressions see that row) and the `clock` CTE, and what it came to.
 */
export function endedAttempt(outcome: { outcome: Prisma.Sql; statusCode: Prisma.Sql; error: Prisma.Sql; answer: Prisma.Sql }): Prisma.Sql {
  return Prisma.sql`jsonb_build_object(
    'attempt', t.attempts, 'startTime', coalesce(t."startTime", clock.now), 'finishTime', clock.now, 'outcome', ${outcome.outcome},
    'statusCode', ${outcome.statusCode}, 'error', ${outcome.error}, 'answer', ${outcome.answer})`;
}

/** The history of a task taken back from an expired lease, with that attempt first as LOST. */
export const HISTORY_AFTER_LOSS: Prisma.Sql = keptAttempts(
  endedAttempt({
    outcome: Prisma.sql`'LOST'`,
    statusCode: Prisma.sql`NULL::int`,
    error: Prisma.sql`'its lease expired: the process running it stopped'`,
    answer: Prisma.sql`NULL::text`,
  }),
);
