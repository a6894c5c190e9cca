import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { parseUtcTimestamp } from '../pg-text.js';
import { statementsOf } from '../statements.js';

/** One minute of an area's activity: how many things ended well and how many failed in it (UTC). */
export interface ActivityMinute {
  minute: Date;
  succeeded: number;
  failed: number;
}

/** The first minute of a window of `minutes` whole minutes that ends with the current one, on the database's clock. */
export function windowStart(minutes: number): Prisma.Sql {
  return Prisma.sql`date_trunc('minute', now() AT TIME ZONE 'UTC') - make_interval(mins => ${minutes - 1}::int)`;
}

/**
 * Every minute of the window, oldest first, zeros included, from `events`: a statement that yields rows of
 * (minute, succeeded, failed) for the minutes that saw something, already restricted to `windowStart(minutes)`.
 * The events are counted first and the minutes joined after, so each row is read once.
 */
export async function activityMinutes(db: PrismaClient, minutes: number, events: Prisma.Sql): Promise<ActivityMinute[]> {
  const rows = await statementsOf(db).rows<{ minute: Date; succeeded: number; failed: number }>(Prisma.sql`
    WITH counted AS (SELECT minute, sum(succeeded)::int AS succeeded, sum(failed)::int AS failed FROM (${events}) AS e GROUP BY minute)
    SELECT m AS minute, coalesce(counted.succeeded, 0) AS succeeded, coalesce(counted.failed, 0) AS failed
    FROM generate_series(${windowStart(minutes)}, date_trunc('minute', now() AT TIME ZONE 'UTC'), interval '1 minute') AS m
    LEFT JOIN counted ON counted.minute = m
    ORDER BY m`);
  return rows.map((r) => ({ minute: r.minute instanceof Date ? r.minute : parseUtcTimestamp(String(r.minute)), succeeded: Number(r.succeeded), failed: Number(r.failed) }));
}
