import type { PrismaClient } from '../../generated/prisma/client.js';

/** The database server's wall clock now, epoch milliseconds (clock_timestamp(): not the transaction's start). */
export async function readDatabaseClock(db: PrismaClient): Promise<number> {
  // Through Prisma, as the workers' other statements: background SQL is not traced without a request to hang under.
  const [row] = await db.$queryRaw<{ ms: number }[]>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`;
  return row!.ms;
}
