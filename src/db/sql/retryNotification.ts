import type { PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';
import { RETRY_JITTER } from '../../kit/jitter.js';

/**
 * After a retryable failure: back to PENDING, claimable again once the next wait of the retry schedule (the system's
 * for this channel, else for all its channels, else `defaultScheduleMs`; its last wait again past its end), jittered
 * by +-RETRY_JITTER, or the adapter's `retryAfterMs` if longer, has passed by the database's clock; or FAILED with the
 * reason once the attempts fixed at acceptance (1 + the schedule's waits) are spent. Only while `workerId` holds the
 * lease.
 */
export async function retryNotification(db: PrismaClient, id: string, workerId: string, reason: string, defaultScheduleMs: readonly number[], retryAfterMs: number): Promise<boolean> {
  const rows = await db.$queryRaw<{ n: number }[]>`
    WITH unit AS (
      SELECT n.id, n.attempts, coalesce(
               (SELECT rs."scheduleMs" FROM "RetrySchedule" rs WHERE rs."systemId" = n."systemId" AND rs.channel IN (n.channel, '*') ORDER BY rs.channel = '*' LIMIT 1),
               string_to_array(${defaultScheduleMs.join(',')}, ',')::int[]) AS waits
      FROM "Notification" n WHERE n.id = ${id}::uuid
    ), done AS (
      UPDATE "Notification" n SET
        status = CASE WHEN n.attempts >= n."maxAttempts" THEN 'FAILED' ELSE 'PENDING' END,
        "lastError" = CASE WHEN n.attempts >= n."maxAttempts" THEN 'gave up after ' || n.attempts || ' attempts: ' || ${reason} ELSE ${reason} END,
        "availableAt" = (now() AT TIME ZONE 'UTC') + make_interval(secs => greatest(
          ${retryAfterMs}::float8,
          coalesce(u.waits[least(greatest(n.attempts, 1), cardinality(u.waits))], 0) * (1 - ${RETRY_JITTER}::float8 + random() * 2 * ${RETRY_JITTER}::float8)
        ) / 1000.0),
        "lockedBy" = NULL, "lockedUntil" = NULL, "updateTime" = (now() AT TIME ZONE 'UTC')
      FROM unit u
      WHERE n.id = u.id AND n."lockedBy" = ${workerId} AND n.status = 'SENDING'
      RETURNING n."incomingId"
    )
    SELECT count(pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'notification', 'key', "incomingId")::text))::int AS n FROM done`;
  return (rows[0]?.n ?? 0) > 0;
}
