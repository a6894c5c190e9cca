import { Prisma, type PrismaClient, type Queue } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';

/** A queue row as the Prisma model reads it (the enum as its text). */
export const QUEUE_COLUMNS = Prisma.raw(`"name", "description", "status"::text AS "status", "paused", "rate", "labels", "createTime", "updateTime"`);

/** One queue by name, or null. */
export async function queueByName(db: PrismaClient, name: string): Promise<Queue | null> {
  const rows = await statementsOf(db).rows<Queue>(Prisma.sql`SELECT ${QUEUE_COLUMNS} FROM "Queue" WHERE "name" = ${name}`);
  return rows[0] ?? null;
}
