import { Prisma, type PrismaClient, type Queue } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL, eventPayload } from './notifyEvent.js';
import { statementsOf } from '../statements.js';
import { QUEUE_COLUMNS } from './queueRow.js';

export interface NewQueue {
  name: string;
  description?: string | undefined;
  rate?: number | undefined;
  labels?: string[] | undefined;
  status?: 'OPEN' | 'CLOSE' | undefined;
}

/**
 * Inserts a queue and announces it in one statement (one round trip, atomic like a transaction: the NOTIFY is
 * delivered only if the row commits). Columns not given take the table's defaults. Null when the name is taken.
 */
export async function insertQueue(db: PrismaClient, queue: NewQueue): Promise<Queue | null> {
  const given: [string, Prisma.Sql][] = [['name', Prisma.sql`${queue.name}`]];
  if (queue.description !== undefined) given.push(['description', Prisma.sql`${queue.description}`]);
  if (queue.rate !== undefined) given.push(['rate', Prisma.sql`${queue.rate}::int`]);
  if (queue.labels !== undefined) given.push(['labels', Prisma.sql`${queue.labels}::text[]`]);
  if (queue.status !== undefined) given.push(['status', Prisma.sql`${queue.status}::"QueueStatus"`]);
  const columns = Prisma.join(given.map(([column]) => Prisma.raw(`"${column}"`)));
  const values = Prisma.join(given.map(([, value]) => value));
  const rows = await statementsOf(db).rows<Queue>(Prisma.sql`
    WITH created AS (
      INSERT INTO "Queue" (${columns}) VALUES (${values}) ON CONFLICT ("name") DO NOTHING
      RETURNING ${QUEUE_COLUMNS}
    )
    SELECT created.* FROM created CROSS JOIN LATERAL (SELECT pg_notify(${EVENTS_CHANNEL}, ${eventPayload('queue', queue.name)})) AS announced`);
  return rows[0] ?? null;
}
