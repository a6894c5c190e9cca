import type { PrismaClient } from '../../generated/prisma/client.js';
import { statusAllows } from './taskStatusSql.js';
import { announceTaskChanges } from './taskEvents.js';

export interface ClaimedTask {
  id: string;
  queueName: string;
  name: string;
  /** RUNNING (run it), or FAILED when a lost attempt was its last one. */
  status: string;
  payload: unknown;
  target: unknown;
  attempts: number;
  maxAttempts: number;
  minBackoffMs: number;
  maxBackoffMs: number;
}

/**
 * Leases up to `limit` runnable tasks of one queue to `workerId`, never more than the queue's free rate slots.
 * The queue row is locked first (FOR UPDATE), so claimers of one queue take turns and each counts the RUNNING
 * tasks only after the previous one committed: the rate holds across every process sharing the database.
 * Runnable: READY and due, or RUNNING with an expired lease (its process died; reclaimed, or FAILED when that was
 * its last attempt). Nothing is claimed unless the queue is OPEN and not paused.
 */
export async function claimTasks(db: PrismaClient, queueName: string, workerId: string, limit: number, leaseSeconds: number): Promise<ClaimedTask[]> {
  // A batch transaction (one round trip per statement, no interactive callback): the second statement runs in a
  // snapshot taken after the first was granted the queue lock, and reads the rate there (0 unless OPEN and unpaused).
  const [, claimed] = await db.$transaction([
    db.$executeRaw`SELECT 1 FROM "Queue" WHERE name = ${queueName} FOR UPDATE`,
    db.$queryRaw<ClaimedTask[]>`
      WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
      slots AS (
        SELECT coalesce((SELECT q.rate FROM "Queue" q WHERE q.name = ${queueName} AND q.status = 'OPEN' AND NOT q.paused), 0)
             - (SELECT count(*)::int FROM "Task" t, clock WHERE t."queueName" = ${queueName} AND t.status = 'RUNNING' AND t."lockedUntil" >= clock.now) AS n
      ),
      picked AS (
        SELECT t.id FROM "Task" t, clock
        WHERE t."queueName" = ${queueName}
          AND ((${statusAllows('t.status', 'claim')} AND t."availableAt" <= clock.now)
            OR (${statusAllows('t.status', 'reclaim')} AND t."lockedUntil" < clock.now))
        ORDER BY t."availableAt", t."createTime"
        LIMIT (SELECT greatest(0, least(slots.n, ${limit}::int)) FROM slots)
        FOR UPDATE OF t SKIP LOCKED
      ),
      claimed AS (
        UPDATE "Task" t SET
          status = CASE WHEN t.attempts >= t."maxAttempts" THEN 'FAILED'::"TaskStatus" ELSE 'RUNNING'::"TaskStatus" END,
          "lastError" = CASE WHEN t.attempts >= t."maxAttempts"
                             THEN 'gave up after ' || t.attempts || ' attempts: the lease of the last one expired (its process stopped)'
                             ELSE t."lastError" END,
          attempts = CASE WHEN t.attempts >= t."maxAttempts" THEN t.attempts ELSE t.attempts + 1 END,
          "lockedBy" = CASE WHEN t.attempts >= t."maxAttempts" THEN NULL ELSE ${workerId} END,
          "lockedUntil" = CASE WHEN t.attempts >= t."maxAttempts" THEN NULL ELSE clock.now + make_interval(secs => ${leaseSeconds}::int) END,
          "startTime" = CASE WHEN t.attempts >= t."maxAttempts" THEN t."startTime" ELSE clock.now END,
          "finishTime" = CASE WHEN t.attempts >= t."maxAttempts" THEN clock.now ELSE NULL END,
          "updateTime" = clock.now
        FROM picked, clock
        WHERE t.id = picked.id
        RETURNING t.id, t."queueName", t.name, t.status, t.payload, t.target, t.attempts, t."maxAttempts", t."minBackoffMs", t."maxBackoffMs"
      ),
      announced AS (${announceTaskChanges('claimed')})
      SELECT c.id::text AS id, c."queueName", c.name, c.status::text AS status, c.payload, c.target, c.attempts, c."maxAttempts",
             c."minBackoffMs", c."maxBackoffMs"
      FROM claimed c, announced`,
  ]);
  return claimed;
}
