import { Prisma } from '../../generated/prisma/client.js';

/** `id IN ($1::uuid, ...)` for a list of row ids (never empty: callers return early). */
export function idIn(column: string, ids: readonly string[]): Prisma.Sql {
  return Prisma.sql`${Prisma.raw(column)} IN (${Prisma.join(ids.map((id) => Prisma.sql`${id}::uuid`))})`;
}
