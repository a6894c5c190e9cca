import type { PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

export interface ClaimedNotification {
  id: string;
  incomingId: string;
  systemId: string;
  channel: string;
  payload: unknown;
  fileGroupId: string | null;
  /** SENDING (deliver it), EXPIRED (sendBefore passed) or FAILED (its last attempt's lease ran out). */
  status: string;
  attempts: number;
  maxAttempts: number;
}

/**
 * ONE statement: picks due units (PENDING with availableAt reached, or SENDING whose lease ran out) urgent first,
 * skipping rows other workers hold, and leases them to `workerId`; units past sendBefore become EXPIRED unsent and
 * units whose last attempt was lost become FAILED instead. Announces the changes in the same statement.
 */
export async function claimNotifications(db: PrismaClient, workerId: string, batch: number, leaseSeconds: number): Promise<ClaimedNotification[]> {
  return db.$queryRaw<ClaimedNotification[]>`
    WITH clock AS (SELECT (now() AT TIME ZONE 'UTC') AS now),
    picked AS (
      SELECT n.id FROM "Notification" n, clock
      WHERE (n.status = 'PENDING' AND n."availableAt" <= clock.now)
         OR (n.status = 'SENDING' AND n."lockedUntil" < clock.now)
      ORDER BY n.priority, n."availableAt"
      LIMIT ${batch}::int
      FOR UPDATE OF n SKIP LOCKED
    ),
    claimed AS (
      UPDATE "Notification" n SET
        status = CASE WHEN n."sendBefore" < clock.now THEN 'EXPIRED'
                      WHEN n.attempts >= n."maxAttempts" THEN 'FAILED'
                      ELSE 'SENDING' END,
        "lastError" = CASE WHEN n."sendBefore" < clock.now THEN 'sendBefore passed before the notification could be delivered'
                           WHEN n.attempts >= n."maxAttempts" THEN 'the lease of the last attempt expired (the sending process stopped)'
                           ELSE n."lastError" END,
        "lockedBy" = CASE WHEN n."sendBefore" < clock.now OR n.attempts >= n."maxAttempts" THEN NULL ELSE ${workerId} END,
        "lockedUntil" = CASE WHEN n."sendBefore" < clock.now OR n.attempts >= n."maxAttempts" THEN NULL
                             ELSE clock.now + make_interval(secs => ${leaseSeconds}::int) END,
        attempts = CASE WHEN n."sendBefore" < clock.now OR n.attempts >= n."maxAttempts" THEN n.attempts ELSE n.attempts + 1 END,
        "updateTime" = clock.now
      FROM picked, clock
      WHERE n.id = picked.id
      RETURNING n.id, n."incomingId", n."systemId", n.channel, n.payload, n."fileGroupId", n.status, n.attempts, n."maxAttempts"
    ),
    announced AS (
      SELECT count(pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'notification', 'key', d."incomingId")::text)) AS n
      FROM (SELECT DISTINCT "incomingId" FROM claimed) d
    )
    SELECT c.id::text AS id, c."incomingId"::text AS "incomingId", c."systemId", c.channel, c.payload, c."fileGroupId"::text AS "fileGroupId",
           c.status, c.attempts, c."maxAttempts"
    FROM claimed c, announced`;
}
