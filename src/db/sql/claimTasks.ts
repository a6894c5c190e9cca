import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { HISTORY_AFTER_LOSS } from './taskHistory.js';
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
  const [, claimed] = await db.$transaction([lockQueues(db, [queueName]), claimTasksStatement(db, queueName, workerId, limit, leaseSeconds)]);
  return claimed;
}

/**
 * Locks the rows of `queueNames` (FOR UPDATE, in name order so that two lockers never wait on each other): the first
 * statement of a transaction that then claims with `claimTasksStatement`.
 */
export function lockQueues(db: PrismaClient, queueNames: readonly string[]): Prisma.PrismaPromise<number> {
  const names = [...new Set(queueNames)].sort();
  return db.$executeRaw`SELECT 1 FROM "Queue" WHERE name IN (${Prisma.join(names)}) ORDER BY name FOR UPDATE`;
}

/** The claim itself; only correct inside a transaction that took `lockQueues` of `queueName` in an earlier statement. */
export function claimTasksStatement(db: PrismaClient, queueName: string, workerId: string, limit: number, leaseSeconds: number): Prisma.PrismaPromise<ClaimedTask[]> {
  return db.$queryRaw<ClaimedTask[]>`
      WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
      ${claimCtes(queueName, workerId, limit, leaseSeconds)},
      announced AS (${announceTaskChanges('claimed')})
      SELECT c.id::text AS id, c."queueName", c.name, c.status::text AS status, c.payload, c.target, c.attempts, c."maxAttempts",
             c."minBackoffMs", c."maxBackoffMs"
      FROM claimed c, announced`;
}

/**
 * The CTEs of a claim, after a `clock` CTE: `claimed` holds the leased rows (id, "queueName", name, status and what
 * running them needs). `settledBefore`: a CTE of task ids this same statement settles (settleAndClaimTasks); they count
 * as no longer RUNNING and are not reclaimed.
 */
export function claimCtes(queueName: string, workerId: string, limit: number, leaseSeconds: number, settledBefore?: string): Prisma.Sql {
  const notSettled = settledBefore ? Prisma.raw(`AND t.id NOT IN (SELECT id FROM ${settledBefore})`) : Prisma.empty;
  return Prisma.sql`      slots AS (
        SELECT coalesce((SELECT q.rate FROM "Queue" q WHERE q.name = ${queueName} AND q.status = 'OPEN' AND NOT q.paused), 0)
             - (SELECT count(*)::int FROM "Task" t, clock WHERE t."queueName" = ${queueName} AND t.status = 'RUNNING' AND t."lockedUntil" >= clock.now ${notSettled}) AS n
      ),
      want AS (SELECT greatest(0, least(slots.n, ${limit}::int)) AS n FROM slots),
      -- Due READY tasks are taken in (availableAt, createTime) order. The index on ("queueName", status, "availableAt")
      -- yields them in availableAt order, so the first \`n\` that are not locked elsewhere are locked in that order and
      -- only the tasks up to the last one's availableAt (ties included) are sorted: the same tasks as sorting them all,
      -- without reading every READY task of the queue on each claim (which a fresh table's plan did).
      cutoff AS (
        SELECT max(f."availableAt") AS at FROM (
          SELECT t."availableAt" FROM "Task" t
          WHERE t."queueName" = ${queueName} AND ${statusAllows('t.status', 'claim')} AND t."availableAt" <= (now() AT TIME ZONE 'UTC')
          ORDER BY t."availableAt"
          LIMIT (SELECT n FROM want)
          FOR UPDATE SKIP LOCKED
        ) f
      ),
      due AS (
        SELECT t.id, t."availableAt", t."createTime" FROM "Task" t
        WHERE t."queueName" = ${queueName} AND ${statusAllows('t.status', 'claim')} AND t."availableAt" <= (SELECT at FROM cutoff)
        ORDER BY t."availableAt", t."createTime"
        LIMIT (SELECT n FROM want)
        FOR UPDATE SKIP LOCKED
      ),
      expired AS (
        SELECT t.id, t."availableAt", t."createTime" FROM "Task" t
        WHERE t."queueName" = ${queueName} AND ${statusAllows('t.status', 'reclaim')} AND t."lockedUntil" < (now() AT TIME ZONE 'UTC') ${notSettled}
        ORDER BY t."availableAt", t."createTime"
        LIMIT (SELECT n FROM want)
        FOR UPDATE SKIP LOCKED
      ),
      picked AS (
        SELECT p.id FROM (SELECT * FROM due UNION ALL SELECT * FROM expired) p
        ORDER BY p."availableAt", p."createTime"
        LIMIT (SELECT n FROM want)
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
          "updateTime" = clock.now,
          -- A task taken back from an expired lease (still RUNNING) ended that attempt without an answer: kept as LOST.
          history = CASE WHEN t.status = 'RUNNING' THEN ${HISTORY_AFTER_LOSS} ELSE t.history END
        FROM picked, clock
        WHERE t.id = picked.id
        RETURNING t.id, t."queueName", t.name, t.status, t.payload, t.target, t.attempts, t."maxAttempts", t."minBackoffMs", t."maxBackoffMs"
      )`;
}
