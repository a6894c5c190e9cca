import { Prisma, type PrismaClient, type Queue } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';
import { QUEUE_COLUMNS } from './queueRow.js';

export interface QueueFilterQuery {
  namePrefix?: string | undefined;
  status?: 'OPEN' | 'CLOSE' | undefined;
  paused?: boolean | undefined;
  label?: string | undefined;
}

export interface QueuePageQuery extends QueueFilterQuery {
  order: 'NAME_ASC' | 'NAME_DESC' | 'CREATE_TIME_ASC' | 'CREATE_TIME_DESC';
  skip: number;
  take: number;
}

// Fixed fragments only: the order is chosen from this table, never written from input.
const ORDER_BY: Record<QueuePageQuery['order'], Prisma.Sql> = {
  NAME_ASC: Prisma.raw('"name" ASC'),
  NAME_DESC: Prisma.raw('"name" DESC'),
  CREATE_TIME_ASC: Prisma.raw('"createTime" ASC, "name" ASC'),
  CREATE_TIME_DESC: Prisma.raw('"createTime" DESC, "name" ASC'),
};

function whereOf(query: QueueFilterQuery): Prisma.Sql {
  const conditions: Prisma.Sql[] = [];
  if (query.namePrefix !== undefined) conditions.push(Prisma.sql`starts_with("name", ${query.namePrefix})`);
  if (query.status !== undefined) conditions.push(Prisma.sql`"status" = ${query.status}::"QueueStatus"`);
  if (query.paused !== undefined) conditions.push(Prisma.sql`"paused" = ${query.paused}`);
  if (query.label !== undefined) conditions.push(Prisma.sql`"labels" @> ARRAY[${query.label}]::text[]`);
  return conditions.length ? Prisma.sql`WHERE ${Prisma.join(conditions, ' AND ')}` : Prisma.empty;
}

/**
 * A page of queues and the number of all that match, in one statement (one round trip instead of a findMany and a
 * count side by side on two connections, which also could see two different moments).
 */
export async function pageQueues(db: PrismaClient, query: QueuePageQuery): Promise<{ items: Queue[]; totalCount: number }> {
  const where = whereOf(query);
  // No CTE: one referenced twice is materialized whole before the page is cut, where the page alone can walk the
  // index of its order and stop at LIMIT. Both subqueries still read the statement's one snapshot.
  const rows = await statementsOf(db).rows<Queue & { totalCount: number }>(Prisma.sql`
    SELECT (SELECT count(*)::int FROM "Queue" ${where}) AS "totalCount", page.*
    FROM (SELECT 1) AS one
    LEFT JOIN LATERAL (
      SELECT ${QUEUE_COLUMNS}
      FROM "Queue" ${where} ORDER BY ${ORDER_BY[query.order]} OFFSET ${query.skip} LIMIT ${query.take}
    ) AS page ON true`);
  const totalCount = rows[0]?.totalCount ?? 0;
  // No queue on the page: the one row carries only the count.
  const items = rows.filter((row) => row.name !== null).map(({ totalCount: _count, ...queue }) => queue);
  return { items, totalCount };
}

/** A page of queues alone: the index of its order is walked up to LIMIT, and no other matching row is read. */
export function queuesOnPage(db: PrismaClient, query: QueuePageQuery): Promise<Queue[]> {
  return statementsOf(db).rows<Queue>(Prisma.sql`
    SELECT ${QUEUE_COLUMNS} FROM "Queue" ${whereOf(query)} ORDER BY ${ORDER_BY[query.order]} OFFSET ${query.skip} LIMIT ${query.take}`);
}

/** The number of queues a filter matches. */
export async function countMatchingQueues(db: PrismaClient, query: QueueFilterQuery): Promise<number> {
  const [row] = await statementsOf(db).rows<{ n: number }>(Prisma.sql`SELECT count(*)::int AS n FROM "Queue" ${whereOf(query)}`);
  return row?.n ?? 0;
}
