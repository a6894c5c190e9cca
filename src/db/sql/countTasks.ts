import type { PrismaClient } from '../../generated/prisma/client.js';

/**
 * Tasks per queue and status, for the metrics gauges; empty while the tasks area (its "Task" table) is not
 * installed, so the gateway scrapes the same before and after that area's migration.
 */
export async function countTasks(db: PrismaClient): Promise<{ queue: string; status: string; n: number }[]> {
  const [exists] = await db.$queryRaw<{ present: boolean }[]>`SELECT to_regclass('public."Task"') IS NOT NULL AS present`;
  if (!exists?.present) return [];
  return db.$queryRaw`SELECT "queueName"::text AS queue, status::text AS status, count(*)::int AS n FROM "Task" GROUP BY 1, 2`;
}
