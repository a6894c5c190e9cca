import type { PrismaClient } from '../generated/prisma/client.js';
import { readDatabaseClock } from './sql/readDatabaseClock.js';

// One clock for every process sharing a database: the database's. What decides (a cron occurrence is due, a lease ran
// out, a backoff ended) is compared with now() in SQL. What a process stamps or computes from "now" itself (a job's
// next occurrence, a record's createTime, an Idempotency-Key's window) uses dbNow(db): its own clock corrected by
// the offset last measured against the database, so a process whose clock is off by minutes neither fires early nor
// stamps the future. The offset is measured at start and every minute (src/runtime/clock-check.ts), reported in the
// log when above a second and on /metrics.

/** Offsets of each database's process clock: process clock minus database clock, in milliseconds. */
const offsets = new WeakMap<object, number>();

/** The database's time now, as this process estimates it (its own clock when no offset was measured). */
export function dbNow(db: object): Date {
  return new Date(Date.now() - (offsets.get(db) ?? 0));
}

/** The offset last measured for `db` (process minus database, ms), or undefined before the first measurement. */
export function clockOffsetOf(db: object): number | undefined {
  return offsets.get(db);
}

/** How many readings one measurement takes; the one with the shortest round trip is kept (the least uncertain). */
const READINGS = 3;

/**
 * Measures how far this process's clock is ahead of the database's (negative: behind), within half a round trip,
 * and keeps it for dbNow. Answers the offset and that uncertainty.
 */
export async function measureClockOffset(db: PrismaClient): Promise<{ offsetMs: number; uncertaintyMs: number }> {
  let best: { offsetMs: number; uncertaintyMs: number } | undefined;
  for (let i = 0; i < READINGS; i++) {
    const sent = Date.now();
    const database = await readDatabaseClock(db);
    const received = Date.now();
    const reading = { offsetMs: (sent + received) / 2 - database, uncertaintyMs: (received - sent) / 2 };
    if (!best || reading.uncertaintyMs < best.uncertaintyMs) best = reading;
  }
  offsets.set(db, best!.offsetMs);
  return best!;
}
