import type { PrismaClient } from '../../generated/prisma/client.js';

/**
 * Takes one token of `key`'s bucket (capacity `capacity`, refilled at `perSecond`) in one statement, whichever gateway
 * process asks: the row lock of the upsert orders concurrent takes. Answers whether a token was granted and how many
 * are left.
 */
export async function takeRateToken(db: PrismaClient, key: string, capacity: number, perSecond: number): Promise<{ granted: boolean; tokens: number }> {
  const rows = await db.$queryRaw<{ granted: boolean; tokens: number }[]>`
    INSERT INTO "RateBucket" (key, tokens, granted, "updatedAt")
    VALUES (${key}, ${capacity}::float8 - 1, true, clock_timestamp() AT TIME ZONE 'UTC')
    ON CONFLICT (key) DO UPDATE SET
      tokens = LEAST(${capacity}::float8, "RateBucket".tokens + EXTRACT(EPOCH FROM (clock_timestamp() AT TIME ZONE 'UTC') - "RateBucket"."updatedAt") * ${perSecond}::float8)
             - CASE WHEN LEAST(${capacity}::float8, "RateBucket".tokens + EXTRACT(EPOCH FROM (clock_timestamp() AT TIME ZONE 'UTC') - "RateBucket"."updatedAt") * ${perSecond}::float8) >= 1 THEN 1 ELSE 0 END,
      granted = LEAST(${capacity}::float8, "RateBucket".tokens + EXTRACT(EPOCH FROM (clock_timestamp() AT TIME ZONE 'UTC') - "RateBucket"."updatedAt") * ${perSecond}::float8) >= 1,
      "updatedAt" = clock_timestamp() AT TIME ZONE 'UTC'
    RETURNING granted, tokens`;
  return rows[0]!;
}
