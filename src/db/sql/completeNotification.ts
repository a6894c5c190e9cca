import type { PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

/** DELIVERED, only while `workerId` still holds the lease; false = the lease was lost (another worker owns it). */
export async function completeNotification(db: PrismaClient, id: string, workerId: string, externalId: string | null): Promise<boolean> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH done AS (
      UPDATE "Notification" SET status = 'DELIVERED', "externalId" = coalesce(${externalId}, "externalId"), "lastError" = NULL,
        "lockedBy" = NULL, "lockedUntil" = NULL, "deliveredTime" = (now() AT TIME ZONE 'UTC'), "updateTime" = (now() AT TIME ZONE 'UTC')
      WHERE id = ${id}::uuid AND "lockedBy" = ${workerId} AND status = 'SENDING'
      RETURNING "incomingId"
    )
    SELECT count(pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'notification', 'key', "incomingId")::text))::int AS n FROM done`;
  return (rows[0]?.n ?? 0) > 0;
}
