import type { PrismaClient } from '../../generated/prisma/client.js';
import { untilDeadline } from '../../runtime/deadline.js';

/** True when the database answers a trivial statement within `timeoutMs`. */
export async function pingDatabase(db: PrismaClient, timeoutMs: number): Promise<boolean> {
  let ok = false;
  const answered = await untilDeadline(
    db.$queryRaw`SELECT 1`.then(() => (ok = true)),
    timeoutMs,
  );
  return answered && ok;
}
