import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { moveTasks, purgeTasks, type Changed } from '../db/sql/bulkTasks.js';
import { fromStatuses, type TaskStatusName } from '../db/task-transitions.js';
import { taskWhere } from './tasks.js';
import type { TaskKey, TaskSelection } from './task-rules.js';

// Bulk actions on tasks (the console's failures page, an operator's script): retry FAILED tasks, cancel waiting ones,
// purge ended ones, by a list of tasks or by a filter. Each changes at most `atMost` tasks in one transaction; a
// filter that matches more says so (`more`), and the caller repeats the call for the next ones.

export type BulkTaskAction = 'retry' | 'cancel' | 'purge';

const TRANSITION = { retry: 'restart', cancel: 'cancel', purge: 'purge' } as const;

export interface BulkTaskResult {
  action: BulkTaskAction;
  /** Tasks selected whose status allows the action (for a filter: at most `atMost`). */
  matched: number;
  /** Tasks the action changed; fewer than matched when some moved meanwhile or (purge) a waiting task depends on them. */
  changed: number;
  /** Tasks changed, by queue and name. */
  tasks: TaskKey[];
  /** A filter matched more tasks than `atMost` whose status allows the action: call again for the next ones. */
  more: boolean;
}

function selectionWhere(selection: TaskSelection, statuses: TaskStatusName[]): Prisma.TaskWhereInput {
  const status = { status: { in: statuses } };
  if (selection.keys) return { ...status, OR: selection.keys.map((key) => ({ queueName: key.queueName, name: key.name })) };
  const filtered = taskWhere(selection.filter ?? {});
  // The filter's own status narrows the action's statuses; one outside them matches nothing.
  return { ...filtered, AND: [...((filtered.AND as Prisma.TaskWhereInput[] | undefined) ?? []), status] };
}

export async function bulkTaskAction(db: PrismaClient, action: BulkTaskAction, selection: TaskSelection): Promise<BulkTaskResult> {
  const transition = TRANSITION[action];
  const where = selectionWhere(selection, fromStatuses(transition));
  const limit = selection.keys ? selection.keys.length : selection.atMost;
  return db.$transaction(async (tx) => {
    // One more than the limit, to tell whether a filter matched more.
    const picked = await tx.task.findMany({ where, select: { id: true }, orderBy: { id: 'asc' }, take: limit + 1 });
    const ids = picked.slice(0, limit).map((t) => t.id);
    const changed: Changed = action === 'purge' ? await purgeTasks(tx, ids) : await moveTasks(tx, transition as 'cancel' | 'restart', ids);
    return { action, matched: ids.length, changed: changed.length, tasks: changed, more: picked.length > limit };
  });
}
