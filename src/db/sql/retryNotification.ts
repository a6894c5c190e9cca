import type { PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

/**
 * After a retryable failure: back to PENDING, claimable again after max(retryAfterMs, baseMs * 2^(attempts-1))
 * (exponent capped at 10), or FAILED with the reason once maxAttempts are spent. Only while `workerId` holds the lease.
 */
export async function retryNotification(db: PrismaClient, id: string, workerId: string, reason: string, baseMs: number, retryAfterMs: number): Promise<boolean> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH done AS (
      UPDATE "Notification" SET
        status = CASE WHEN attempts >= "maxAttempts" THEN 'FAILED' ELSE 'PENDING' END,
        "lastError" = CASE WHEN attempts >= "maxAttempts" THEN 'gave up after ' || attempts || ' attempts: ' || ${reason} ELSE ${reason} END,
        "availableAt" = (now() AT TIME ZONE 'UTC')
          + make_interval(secs => greatest(${retryAfterMs}::float8, ${baseMs}::float8 * power(2, least(greatest(attempts - 1, 0), 10))) / 1000.0),
        "lockedBy" = NULL, "lockedUntil" = NULL, "updateTime" = (now() AT TIME ZONE 'UTC')
      WHERE id = ${id}::uuid AND "lockedBy" = ${workerId} AND status = 'SENDING'
      RETURNING "incomingId"
    )
    SELECT count(pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'notification', 'key', "incomingId")::text))::int AS n FROM done`;
  return (rows[0]?.n ?? 0) > 0;
}
