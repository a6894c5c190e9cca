import type { PrismaClient } from '../../generated/prisma/client.js';

export interface PendingRetries {
  channel: string;
  /** Notifications waiting to be tried again after a failed attempt. */
  n: number;
  /** When the first of them is due, epoch seconds. */
  nextAt: number;
}

/** Per channel, the notifications PENDING after a failed attempt and the earliest next attempt among them. */
export async function pendingRetries(db: PrismaClient): Promise<PendingRetries[]> {
  return db.$queryRaw<PendingRetries[]>`
    SELECT channel, count(*)::int AS n, extract(epoch FROM min("availableAt") AT TIME ZONE 'UTC')::float8 AS "nextAt"
    FROM "Notification" WHERE status = 'PENDING' AND attempts > 0
    GROUP BY channel`;
}
