import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { activityMinutes, windowStart, type ActivityMinute } from './activityMinutes.js';

/** Tasks that ended per minute over the last `minutes` minutes: SUCCEEDED and FAILED, by their finishTime; one queue's when named. */
export function taskActivity(db: PrismaClient, minutes: number, queueName?: string): Promise<ActivityMinute[]> {
  return activityMinutes(
    db,
    minutes,
    Prisma.sql`SELECT date_trunc('minute', "finishTime") AS minute, (status = 'SUCCEEDED')::int AS succeeded, (status = 'FAILED')::int AS failed
      FROM "Task" WHERE status IN ('SUCCEEDED', 'FAILED') AND "finishTime" >= ${windowStart(minutes)}${queueName === undefined ? Prisma.empty : Prisma.sql` AND "queueName" = ${queueName}`}`,
  );
}
