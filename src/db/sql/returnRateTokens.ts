import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';

/**
 * Gives `count` unspent leased tokens back to `key`'s bucket. The lease periods' counts stay as they are: the bucket
 * and the tokens processes still hold then add up to less than one bucket would hold, never more.
 */
export async function returnRateTokens(db: PrismaClient, key: string, count: number, capacity: number): Promise<void> {
  await statementsOf(db).rows(Prisma.sql`
    UPDATE "RateBucket" SET tokens = LEAST(${capacity}::float8, tokens + ${count}::float8) WHERE key = ${key}`);
}
