import type { Prisma } from '../../generated/prisma/client.js';

export interface DueJob {
  name: string;
  schedule: string;
  timeZone: string;
  misfirePolicy: 'FIRE_ONCE' | 'SKIP';
  /** The occurrence to fire, epoch milliseconds (UTC). */
  nextRunMs: number;
  /** The database's now() (the transaction's start), epoch milliseconds: what the round decides against. */
  nowMs: number;
}

/**
 * Locks up to `limit` ENABLED jobs whose next occurrence is due by the database's clock (never a process's: one whose
 * clock runs ahead would fire early), earliest first, skipping rows another process holds; the locks last until `tx`
 * ends, in which fireOccurrences moves them forward.
 */
export async function claimDueJobs(tx: Prisma.TransactionClient, limit: number): Promise<DueJob[]> {
  return tx.$queryRaw<DueJob[]>`
    SELECT name, schedule, "timeZone", "misfirePolicy"::text AS "misfirePolicy",
           (extract(epoch FROM "nextRunTime" AT TIME ZONE 'UTC') * 1000)::float8 AS "nextRunMs",
           (extract(epoch FROM now()) * 1000)::float8 AS "nowMs"
    FROM "Job"
    WHERE status = 'ENABLED' AND "nextRunTime" <= (now() AT TIME ZONE 'UTC')
    ORDER BY "nextRunTime"
    LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`;
}
