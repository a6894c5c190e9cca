import type { PrismaClient } from '../../generated/prisma/client.js';

/** Epoch milliseconds of the earliest nextRunTime of an ENABLED job, or null when no job is due ever. */
export async function nextDueTime(db: PrismaClient): Promise<number | null> {
  const rows = await db.$queryRaw<{ ms: number | null }[]>`
    SELECT (extract(epoch FROM min("nextRunTime") AT TIME ZONE 'UTC') * 1000)::float8 AS ms
    FROM "Job" WHERE status = 'ENABLED'`;
  return rows[0]?.ms ?? null;
}
