import type { PrismaClient } from '../../generated/prisma/client.js';

/** Names of the migrations Prisma recorded as finished (and not rolled back). */
export async function appliedMigrations(db: PrismaClient): Promise<string[]> {
  const rows = await db.$queryRaw<{ migration_name: string }[]>`
    SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
  return rows.map((r) => r.migration_name);
}
