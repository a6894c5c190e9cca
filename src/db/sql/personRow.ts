import { Prisma, type Person, type PrismaClient } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';

/** One person's row by oid, or null (the record alone: relations are Prisma's). */
export async function personByOid(db: PrismaClient, oid: string): Promise<Person | null> {
  const rows = await statementsOf(db).rows<Person>(Prisma.sql`SELECT * FROM "Person" WHERE "oid" = ${oid}`);
  return rows[0] ?? null;
}
