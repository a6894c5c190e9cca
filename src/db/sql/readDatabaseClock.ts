import type { PrismaClient } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';
import { Prisma } from '../../generated/prisma/client.js';

/** The database server's wall clock now, epoch milliseconds (clock_timestamp(): not the transaction's start). */
export async function readDatabaseClock(db: PrismaClient): Promise<number> {
  const [row] = await statementsOf(db).rows<{ ms: number }>(Prisma.sql`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`);
  return row!.ms;
}
