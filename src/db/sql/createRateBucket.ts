import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';

/** Makes `key`'s bucket, full, unless it exists (a key's first lease, or after a crash emptied the UNLOGGED table). */
export async function createRateBucket(db: PrismaClient, key: string, capacity: number): Promise<void> {
  await statementsOf(db).rows(Prisma.sql`
    INSERT INTO "RateBucket" (key, tokens, granted, "updatedAt")
    VALUES (${key}, ${capacity}::float8, true, clock_timestamp() AT TIME ZONE 'UTC')
    ON CONFLICT (key) DO NOTHING`);
}
