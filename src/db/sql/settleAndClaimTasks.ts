import type { PrismaClient } from '../../generated/prisma/client.js';
import { claimCtes, lockQueues, type ClaimedTask } from './claimTasks.js';
import { settleCtes, type TaskSettlement } from './settleTask.js';
import { announceTaskChanges } from './taskEvents.js';

/**
 * Ends attempts (as settleTasks) and leases up to `claim.limit` runnable tasks of `claim.queueName` (as claimTasks) in
 * the slots they free, in one transaction of two statements: a queue's freed slots are handed on at the commit that
 * frees them, with no idle gap and no transaction of its own. The queue row is locked by the first statement, so the
 * second (a later snapshot) sees every claim of the queue any process committed; it counts the queue's RUNNING tasks
 * less those it settles itself, so the rate holds across processes exactly as with claimTasks. Announces the settled
 * tasks, then the claimed ones, and their queues once.
 */
export async function settleAndClaimTasks(
  db: PrismaClient,
  workerId: string,
  items: readonly { id: string; settlement: TaskSettlement }[],
  claim: { queueName: string; limit: number; leaseSeconds: number },
): Promise<{ settled: Set<string>; claimed: ClaimedTask[] }> {
  const [, rows] = await db.$transaction([
    lockQueues(db, [claim.queueName]),
    db.$queryRaw<(ClaimedTask & { settledOnly: boolean })[]>`
      WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
      ${settleCtes(workerId, items)},
      ${claimCtes(claim.queueName, workerId, claim.limit, claim.leaseSeconds, 'settled')},
      changed AS (SELECT "queueName", name, status FROM settled UNION ALL SELECT "queueName", name, status FROM claimed),
      announced AS (${announceTaskChanges('changed')})
      SELECT true AS "settledOnly", s.id::text AS id, s."queueName", s.name, s.status::text AS status,
             NULL::jsonb AS payload, NULL::jsonb AS target, NULL::int AS attempts, NULL::int AS "maxAttempts",
             NULL::int AS "minBackoffMs", NULL::int AS "maxBackoffMs"
      FROM settled s, announced
      UNION ALL
      SELECT false, c.id::text, c."queueName", c.name, c.status::text, c.payload, c.target, c.attempts, c."maxAttempts",
             c."minBackoffMs", c."maxBackoffMs"
      FROM claimed c, announced`,
  ]);
  const settled = new Set<string>();
  const claimed: ClaimedTask[] = [];
  for (const { settledOnly, ...row } of rows) {
    if (settledOnly) settled.add(row.id);
    else claimed.push(row);
  }
  return { settled, claimed };
}
