import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { statementsOf } from '../statements.js';
import { coalescedRead } from '../coalesced-reads.js';

export interface QueueTaskCount {
  queueName: string;
  /** Status -> number of the queue's tasks in it; a status without tasks is absent. */
  counts: Record<string, number>;
}

/**
 * The number of a queue's tasks in each status. Reads for the queues of one page (a console's list) share one
 * statement, counted on the (queueName, status, availableAt) index; a queue without tasks has no row.
 */
export const queueTaskCounts = coalescedRead<PrismaClient, string, QueueTaskCount>({
  rows: async (db, names) => {
    const rows = await statementsOf(db).rows<{ queueName: string; status: string; n: number }>(
      Prisma.sql`SELECT "queueName", status::text AS status, count(*)::int AS n FROM "Task" WHERE "queueName" = ANY(${names}::text[]) GROUP BY 1, 2`,
    );
    const byQueue = new Map<string, QueueTaskCount>();
    for (const row of rows) {
      let entry = byQueue.get(row.queueName);
      if (!entry) byQueue.set(row.queueName, (entry = { queueName: row.queueName, counts: {} }));
      entry.counts[row.status] = Number(row.n);
    }
    return [...byQueue.values()];
  },
  keyOf: (row) => row.queueName,
});
