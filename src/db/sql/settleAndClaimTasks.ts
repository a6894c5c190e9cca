import type { PrismaClient } from '../../generated/prisma/client.js';
import { claimTasksStatement, lockQueues, type ClaimedTask } from './claimTasks.js';
import { settleTasksStatement, type TaskSettlement } from './settleTask.js';

/**
 * Ends attempts (as settleTasks) and, in the same transaction, leases up to `claim.limit` runnable tasks of
 * `claim.queueName` (as claimTasks) in the slots they free: a queue's freed slots are handed on at the commit that
 * frees them, with no idle gap and no separate claim transaction. The queue row is locked first, by its own statement,
 * so the claim (a later statement, hence a later snapshot) counts the RUNNING tasks after the settle and after every
 * other claimer of the queue committed: the rate holds across processes exactly as with claimTasks.
 */
export async function settleAndClaimTasks(
  db: PrismaClient,
  workerId: string,
  items: readonly { id: string; settlement: TaskSettlement }[],
  claim: { queueName: string; limit: number; leaseSeconds: number },
): Promise<{ settled: Set<string>; claimed: ClaimedTask[] }> {
  const [, settled, claimed] = await db.$transaction([
    lockQueues(db, [claim.queueName]),
    settleTasksStatement(db, workerId, items),
    claimTasksStatement(db, claim.queueName, workerId, claim.limit, claim.leaseSeconds),
  ]);
  return { settled: new Set(settled.map((r) => r.id)), claimed };
}
