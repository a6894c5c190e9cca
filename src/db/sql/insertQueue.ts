import { Prisma, type PrismaClient, type Queue } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';
import { statementsOf } from '../statements.js';
import { QUEUE_COLUMNS } from './queueRow.js';

export interface NewQueue {
  name: string;
  description?: string | undefined;
  rate?: number | undefined;
  labels?: string[] | undefined;
  status?: 'OPEN' | 'CLOSE' | undefined;
  maxConcurrentDispatches?: number | null | undefined;
}

/** The columns a new queue may give, with their SQL types; a column not given takes the table's default. */
const GIVEN_COLUMNS = { name: 'text', description: 'text', rate: 'int', labels: 'text[]', status: '"QueueStatus"', maxConcurrentDispatches: 'int' } as const;
type Column = keyof typeof GIVEN_COLUMNS;

/** The columns a new queue gives: queues share a statement only when they give the same ones. */
export function givenColumns(queue: NewQueue): string {
  return (Object.keys(GIVEN_COLUMNS) as Column[]).filter((column) => queue[column] !== undefined && queue[column] !== null).join(',');
}

/** Queues in one statement at most: the NOTIFY payload names them all and must stay under 8,000 bytes (names <= 128). */
export const MAX_QUEUES_PER_STATEMENT = 50;

/**
 * Inserts queues that give the same columns (givenColumns), with distinct names, and announces them, in one statement
 * (one round trip, atomic like a transaction: the NOTIFY is delivered only if the rows commit). Answers each queue's
 * row, in order, or null where the name was taken. At most MAX_QUEUES_PER_STATEMENT queues.
 */
export async function insertQueues(db: PrismaClient, queues: NewQueue[]): Promise<(Queue | null)[]> {
  const columns = givenColumns(queues[0]!).split(',') as Column[];
  const names = Prisma.raw(columns.map((column) => `"${column}"`).join(', '));
  const types = Prisma.raw(columns.map((column) => `"${column}" ${GIVEN_COLUMNS[column]}`).join(', '));
  const rows = await statementsOf(db).rows<Queue>(Prisma.sql`
    WITH created AS (
      INSERT INTO "Queue" (${names}) SELECT ${names} FROM json_to_recordset(${JSON.stringify(queues)}::json) AS given(${types})
      ON CONFLICT ("name") DO NOTHING
      RETURNING ${QUEUE_COLUMNS}
    ), announced AS (
      SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'queue', 'keys', json_agg("name"))::text) FROM created HAVING count(*) > 0
    )
    SELECT created.* FROM created WHERE (SELECT count(*) FROM announced) >= 0`);
  const byName = new Map(rows.map((row) => [row.name, row]));
  return queues.map((queue) => byName.get(queue.name) ?? null);
}
