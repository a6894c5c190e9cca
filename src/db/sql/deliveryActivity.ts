import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { activityMinutes, windowStart, type ActivityMinute } from './activityMinutes.js';

/**
 * Notification units delivered (by deliveredTime, whatever their reader did since) and given up (FAILED or EXPIRED,
 * by updateTime) per minute over the last `minutes` minutes; of one system only when `systemId` is set.
 */
export function deliveryActivity(db: PrismaClient, minutes: number, systemId: string | null): Promise<ActivityMinute[]> {
  const ofSystem = systemId === null ? Prisma.empty : Prisma.sql`AND "systemId" = ${systemId}`;
  return activityMinutes(
    db,
    minutes,
    Prisma.sql`SELECT date_trunc('minute', "deliveredTime") AS minute, 1 AS succeeded, 0 AS failed
        FROM "Notification" WHERE "deliveredTime" >= ${windowStart(minutes)} ${ofSystem}
      UNION ALL
      SELECT date_trunc('minute', "updateTime"), 0, 1
        FROM "Notification" WHERE status IN ('FAILED', 'EXPIRED') AND "updateTime" >= ${windowStart(minutes)} ${ofSystem}`,
  );
}
