import type { Gateway } from '../../src/app.js';

// How many statements did the gateway run? PostgreSQL's own count: each statement that reads or writes a table
// scans it (pg_stat_user_tables: seq_scan + idx_scan; one per statement for the single-table statements the tested
// paths run). A backend reports its counts at most once a second, so the gateway's own connection is told to report
// them first: with DATABASE_POOL_MAX=1 (or the embedded database, one connection) that connection ran every
// statement the gateway ran. The event listener's connection reads no table.

/** Table scans PostgreSQL counted so far in the gateway's database, the gateway's own ones reported up to now. */
export async function tableScans(gateway: Gateway): Promise<number> {
  const db = gateway.services.db;
  // The flush happens when the connection goes idle after this statement, before it answers.
  await db.$queryRawUnsafe('SELECT 1 FROM (SELECT pg_stat_force_next_flush()) AS flushed');
  const [row] = await db.$queryRawUnsafe<{ n: bigint }[]>('SELECT coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)::bigint AS n FROM pg_stat_user_tables');
  return Number(row!.n);
}

/** The gateway environment that makes tableScans() count every statement of the gateway. */
export const ONE_CONNECTION = { DATABASE_POOL_MAX: '1' } as const;
