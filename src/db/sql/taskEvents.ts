import { Prisma } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

// The events a task change announces, as SQL over a CTE of changed rows ("queueName", name, status): one `task`
// event per row (key queue/name, detail the new status, for taskStatusChanged) and one `queueTasks` event per
// queue (for tasksSummaryChanged and every dispatcher's wake-up). Sent when the statement's transaction commits.

/** `SELECT count(...) AS n` announcing the rows of CTE `changed`; join it to the final SELECT so it runs. */
export function announceTaskChanges(changed: string): Prisma.Sql {
  const from = Prisma.raw(changed);
  return Prisma.sql`SELECT
      (SELECT count(pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'task', 'key', c."queueName" || '/' || c.name, 'detail', c.status::text)::text)) FROM ${from} c)
    + (SELECT count(pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'queueTasks', 'key', q."queueName")::text)) FROM (SELECT DISTINCT "queueName" FROM ${from}) q) AS n`;
}

/** The key of a task in `task` events. */
export function taskEventKey(queueName: string, name: string): string {
  return `${queueName}/${name}`;
}

/** The same two events for one task changed by Prisma in `tx` (create, cancel, restart). */
export async function notifyTaskChange(tx: Prisma.TransactionClient, task: { queueName: string; name: string; status: string }): Promise<void> {
  const taskEvent = JSON.stringify({ topic: 'task', key: taskEventKey(task.queueName, task.name), detail: task.status });
  const queueEvent = JSON.stringify({ topic: 'queueTasks', key: task.queueName });
  await tx.$executeRaw`SELECT pg_notify(${EVENTS_CHANNEL}, ${taskEvent}), pg_notify(${EVENTS_CHANNEL}, ${queueEvent})`;
}
