import type { PrismaClient } from '../../generated/prisma/client.js';

/**
 * Milliseconds from the database's now() to the earliest nextRunTime of an ENABLED job (negative when one is overdue),
 * or null when no job is due ever: a process sleeps that long whatever its own clock says.
 */
export async function nextDueTime(db: PrismaClient): Promise<number | null> {
  const rows = await db.$queryRaw<{ ms: number | null }[]>`
    SELECT (extract(epoch FROM min("nextRunTime") - (now() AT TIME ZONE 'UTC')) * 1000)::float8 AS ms
    FROM "Job" WHERE status = 'ENABLED'`;
  return rows[0]?.ms ?? null;
}
