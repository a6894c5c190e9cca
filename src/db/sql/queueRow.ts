import { Prisma, type PrismaClient, type Queue } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';
import { coalescedRead } from '../coalesced-reads.js';

/** A queue row as the Prisma model reads it (the enum as its text). */
export const QUEUE_COLUMNS = Prisma.raw(`"name", "description", "status"::text AS "status", "paused", "rate", "maxConcurrentDispatches", "labels", "createTime", "updateTime"`);

/** One queue by name, or null (reads arriving together share a statement: src/db/coalesced-reads.ts). */
export const queueByName = coalescedRead<PrismaClient, string, Queue>({
  rows: (db, names) => statementsOf(db).rows<Queue>(Prisma.sql`SELECT ${QUEUE_COLUMNS} FROM "Queue" WHERE "name" = ANY(${names}::text[])`),
  keyOf: (queue) => queue.name,
});
