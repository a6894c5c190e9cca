import type { PrismaClient } from '../../generated/prisma/client.js';
import { idIn } from './idIn.js';

/** Extends the leases `workerId` holds on the notifications `ids` it is sending; answers the ids it still holds. */
export async function renewNotificationLeases(db: PrismaClient, ids: string[], workerId: string, leaseSeconds: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.$queryRaw<{ id: string }[]>`
    UPDATE "Notification" SET "lockedUntil" = (now() AT TIME ZONE 'UTC') + make_interval(secs => ${leaseSeconds}::int)
    WHERE ${idIn('id', ids)} AND "lockedBy" = ${workerId} AND status = 'SENDING'
    RETURNING id::text AS id`;
  return rows.map((row) => row.id);
}
