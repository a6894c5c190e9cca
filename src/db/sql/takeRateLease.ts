import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';

/** How long a lease period lasts; a lease lives until the end of the period after the one it was taken in. */
export const LEASE_PERIOD_MS = 1000;
/** A lease beyond what is needed at once takes at most this share of the tokens left (so other processes get some). */
export const LEASE_SHARE_DIVISOR = 8;

export interface RateLease {
  /** Tokens granted (0 when the bucket holds less than one). */
  granted: number;
  /** Tokens left in the bucket after the grant. */
  tokens: number;
  /** Milliseconds, by the database's clock, until the lease ends (the end of the next lease period). */
  expiresInMs: number;
}

/**
 * Leases tokens of `key`'s bucket (capacity `capacity`, refilled at `perSecond`) in one statement, whichever gateway
 * process asks; the row lock orders concurrent leases. Grants `need` (tokens spent at once by waiting operations) or,
 * when more is left, up to `want` but no more than a LEASE_SHARE_DIVISOR-th of what is left; never more than the
 * bucket holds. So the lease shrinks to the waiting operations' tokens as the key nears its limit.
 *
 * Tokens out on lease count against the refill: the bucket refills only up to `capacity` less the tokens leased in this
 * lease period and the one before (every token a process may still hold), as one bucket that kept them would. Answers
 * no row when the key has no bucket yet (see createRateBucket).
 */
export async function takeRateLease(db: PrismaClient, key: string, capacity: number, perSecond: number, need: number, want: number): Promise<RateLease | undefined> {
  const rows = await statementsOf(db).rows<RateLease>(Prisma.sql`
    WITH now AS (
      SELECT clock_timestamp() AT TIME ZONE 'UTC' AS t,
             floor(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 / ${LEASE_PERIOD_MS}::float8)::bigint AS epoch,
             EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS ms
    ), rolled AS (
      SELECT b.key, b.tokens, b."updatedAt", now.t, now.epoch, now.ms,
             CASE WHEN b."leasedEpoch" = now.epoch THEN b."leasedNow" ELSE 0 END AS leased_now,
             CASE WHEN b."leasedEpoch" = now.epoch THEN b."leasedPrev" WHEN b."leasedEpoch" = now.epoch - 1 THEN b."leasedNow" ELSE 0 END AS leased_prev
      FROM "RateBucket" b, now WHERE b.key = ${key} FOR UPDATE OF b
    ), refilled AS (
      SELECT *, LEAST(${capacity}::float8, tokens + GREATEST(0, LEAST(
               GREATEST(0, EXTRACT(EPOCH FROM t - "updatedAt")) * ${perSecond}::float8,
               ${capacity}::float8 - leased_now - leased_prev - tokens))) AS available
      FROM rolled
    ), grant_of AS (
      SELECT *, CASE WHEN available < 1 THEN 0
                     ELSE LEAST(floor(available), GREATEST(${need}::float8, LEAST(${want}::float8, floor(available / ${LEASE_SHARE_DIVISOR}::float8))))
                END AS grant_n
      FROM refilled
    )
    UPDATE "RateBucket" b SET
      tokens = g.available - g.grant_n,
      granted = g.grant_n > 0,
      "updatedAt" = g.t,
      "leasedEpoch" = g.epoch,
      "leasedNow" = g.leased_now + g.grant_n,
      "leasedPrev" = g.leased_prev
    FROM grant_of g WHERE b.key = g.key
    RETURNING g.grant_n::float8 AS granted, b.tokens, ((g.epoch + 2) * ${LEASE_PERIOD_MS}::float8 - g.ms)::float8 AS "expiresInMs"`);
  return rows[0];
}
