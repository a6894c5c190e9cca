import type { PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

/** FAILED with the reason (a permanent outcome), only while `workerId` holds the lease. */
export async function failNotification(db: PrismaClient, id: string, workerId: string, reason: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH done AS (
      UPDATE "Notification" SET status = 'FAILED', "lastError" = ${reason}, "lockedBy" = NULL, "lockedUntil" = NULL,
        "updateTime" = (now() AT TIME ZONE 'UTC')
      WHERE id = ${id}::uuid AND "lockedBy" = ${workerId} AND status = 'SENDING'
      RETURNING "incomingId"
    )
    SELECT count(pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'notification', 'key', "incomingId")::text))::int AS n FROM done`;
  return (rows[0]?.n ?? 0) > 0;
}
