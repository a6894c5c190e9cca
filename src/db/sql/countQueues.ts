import type { PrismaClient } from '../../generated/prisma/client.js';

/** Queues per status and paused flag, for the metrics gauges. */
export async function countQueues(db: PrismaClient): Promise<{ status: string; paused: boolean; n: number }[]> {
  return db.$queryRaw`SELECT status::text AS status, paused, count(*)::int AS n FROM "Queue" GROUP BY 1, 2`;
}
