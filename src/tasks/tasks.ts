import type { PrismaClient, Prisma, Task } from '../generated/prisma/client.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { translateWriteErrors } from '../db/errors.js';
import { dbNow } from '../db/clock.js';
import { likeLiteral } from '../db/like.js';
import { notifyTaskChange } from '../db/sql/taskEvents.js';
import { moveTasks } from '../db/sql/bulkTasks.js';
import type { QueueDeleteGuard } from '../queues/queues.js';
import type { OutboundPolicy } from '../http/outbound-policy.js';
import { readPage, type Page, type Window } from '../pagination.js';
import { assertTransition, type CreateTaskInput, type TaskFilter, type TaskKey } from './task-rules.js';
import { TASK_STATUSES, type TaskAction, type TaskStatusName } from '../db/task-transitions.js';

// The tasks area over Prisma. Inputs are already validated by the edge (task-rules.ts); status changes made here
// (create, cancel, restart) and by the dispatcher (src/db/sql/*Task*.ts) all take their rules from TASK_TRANSITIONS.

export type { Task };
export type TaskOrder = 'NAME_ASC' | 'NAME_DESC' | 'CREATE_TIME_ASC' | 'CREATE_TIME_DESC' | 'FINISH_TIME_DESC';
export type TasksSummary = { queueName: string; total: number } & Record<TaskStatusName, number>;

const ORDER: Record<TaskOrder, Prisma.TaskOrderByWithRelationInput[]> = {
  NAME_ASC: [{ name: 'asc' }, { queueName: 'asc' }],
  NAME_DESC: [{ name: 'desc' }, { queueName: 'asc' }],
  CREATE_TIME_ASC: [{ createTime: 'asc' }, { name: 'asc' }],
  CREATE_TIME_DESC: [{ createTime: 'desc' }, { name: 'asc' }],
  // Ended tasks newest first (the console's failures), those not ended after them.
  FINISH_TIME_DESC: [{ finishTime: { sort: 'desc', nulls: 'last' } }, { id: 'asc' }],
};

const describe = (key: TaskKey) => `task "${key.name}" of queue "${key.queueName}"`;

/** Creates a task; its target URL must be one the outbound policy lets the gateway call. */
export async function createTask(db: PrismaClient, input: CreateTaskInput, outbound: OutboundPolicy): Promise<Task> {
  outbound.assertAllowed(input.target.url, 'target.url');
  return translateWriteErrors(describe(input), () =>
    db.$transaction(async (tx) => {
      // FOR SHARE: a concurrent closeQueue or deleteQueue waits for this task, or this task sees the queue closed.
      const [queue] = await tx.$queryRaw<{ status: string }[]>`SELECT status::text AS status FROM "Queue" WHERE name = ${input.queueName} FOR SHARE`;
      if (!queue) throw new NotFoundError(`queue "${input.queueName}" not found`);
      if (queue.status !== 'OPEN') throw new ConflictError(`queue "${input.queueName}" is ${queue.status}; it accepts no new tasks until openQueue`, { queueStatus: queue.status });
      const dependsOn = [...new Set(input.dependsOn ?? [])];
      const deps = dependsOn.length
        ? await tx.task.findMany({ where: { queueName: input.queueName, name: { in: dependsOn } }, select: { name: true, status: true } })
        : [];
      const missing = dependsOn.filter((name) => !deps.some((d) => d.name === name));
      if (missing.length) {
        // Dependencies must exist first: a typo fails now instead of blocking forever, and no cycle can form.
        throw new ValidationError([{ field: 'dependsOn', message: `no task ${missing.map((m) => `"${m}"`).join(', ')} in queue "${input.queueName}"` }]);
      }
      const now = dbNow(db);
      const waiting = deps.some((d) => d.status !== 'SUCCEEDED') || (input.scheduleTime !== undefined && input.scheduleTime > now);
      const task = await tx.task.create({
        data: {
          queueName: input.queueName,
          name: input.name,
          description: input.description ?? '',
          status: waiting ? 'BLOCKED' : 'READY',
          ...(input.payload !== undefined && { payload: input.payload as Prisma.InputJsonValue }),
          target: input.target as Prisma.InputJsonValue,
          scheduleTime: input.scheduleTime ?? null,
          dependsOn,
          ...(input.maxAttempts !== undefined && { maxAttempts: input.maxAttempts }),
          ...(input.minBackoffMs !== undefined && { minBackoffMs: input.minBackoffMs }),
          ...(input.maxBackoffMs !== undefined && { maxBackoffMs: input.maxBackoffMs }),
          availableAt: input.scheduleTime && input.scheduleTime > now ? input.scheduleTime : now,
          createTime: now,
          updateTime: now,
        },
      });
      await notifyTaskChange(tx, task);
      return task;
    }),
  );
}

/** The task's status now, or null when there is no such task. */
export async function taskStatusOf(db: PrismaClient, key: TaskKey): Promise<TaskStatusName | null> {
  const row = await db.task.findUnique({ where: { queueName_name: key }, select: { status: true } });
  return row ? (row.status as TaskStatusName) : null;
}

export async function getTask(db: PrismaClient, key: TaskKey): Promise<Task> {
  const task = await db.task.findUnique({ where: { queueName_name: key } });
  if (!task) throw new NotFoundError(`${describe(key)} not found`);
  return task;
}

export function taskWhere(filter: TaskFilter): Prisma.TaskWhereInput {
  return {
    ...(filter.queueName !== undefined && { queueName: filter.queueName }),
    ...(filter.name !== undefined && { name: { startsWith: likeLiteral(filter.name) } }),
    ...(filter.description !== undefined && { description: { contains: likeLiteral(filter.description), mode: 'insensitive' } }),
    ...(filter.status !== undefined && { status: filter.status }),
    ...(filter.nameContains !== undefined && { AND: [{ name: { contains: likeLiteral(filter.nameContains), mode: 'insensitive' } }] }),
    ...(filter.errorContains !== undefined && { lastError: { contains: likeLiteral(filter.errorContains), mode: 'insensitive' } }),
    ...((filter.finishedAfter !== undefined || filter.finishedBefore !== undefined) && {
      finishTime: { ...(filter.finishedAfter !== undefined && { gte: filter.finishedAfter }), ...(filter.finishedBefore !== undefined && { lt: filter.finishedBefore }) },
    }),
  };
}

export async function findTasks(db: PrismaClient, filter: TaskFilter, order: TaskOrder, window: Window): Promise<Page<Task>> {
  const where = taskWhere(filter);
  return readPage(
    window,
    (skip, take) => db.task.findMany({ where, orderBy: ORDER[order], skip, take }),
    () => db.task.count({ where }),
  );
}

/** The count of every status of a queue's tasks, zeros included. */
export async function tasksSummary(db: PrismaClient, queueName: string): Promise<TasksSummary> {
  const queue = await db.queue.findUnique({ where: { name: queueName }, select: { name: true } });
  if (!queue) throw new NotFoundError(`queue "${queueName}" not found`);
  const groups = await db.task.groupBy({ by: ['status'], where: { queueName }, _count: { _all: true } });
  const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, groups.find((g) => g.status === s)?._count._all ?? 0])) as Record<TaskStatusName, number>;
  return { queueName, total: Object.values(counts).reduce((a, b) => a + b, 0), ...counts };
}

/**
 * Moves one task by `action` if its status allows, else a CONFLICT naming the status; nothing changes on refusal. The
 * statement is the bulk actions' own (src/db/sql/bulkTasks.ts): what a cancel or a restart writes is said there once.
 */
async function transition(db: PrismaClient, action: Extract<TaskAction, 'cancel' | 'restart'>, key: TaskKey): Promise<Task> {
  return db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({ where: { queueName_name: key } });
    if (!task) throw new NotFoundError(`${describe(key)} not found`);
    assertTransition(action, task);
    const moved = await moveTasks(tx, action, [task.id]);
    if (moved.length === 0) throw new ConflictError(`${describe(key)} changed while ${action} ran; read it and try again`);
    return tx.task.findUniqueOrThrow({ where: { id: task.id } });
  });
}

export function cancelTask(db: PrismaClient, key: TaskKey): Promise<Task> {
  return transition(db, 'cancel', key);
}

export function restartTask(db: PrismaClient, key: TaskKey): Promise<Task> {
  return transition(db, 'restart', key);
}

/**
 * Runs a waiting task at once: a READY one waiting out a backoff, or a BLOCKED one waiting for its schedule time whose
 * dependencies all SUCCEEDED, becomes READY and due now (the queue's rate and pause still apply). Anything else is a
 * CONFLICT that changes nothing.
 */
export async function runTaskNow(db: PrismaClient, key: TaskKey): Promise<Task> {
  return db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({ where: { queueName_name: key } });
    if (!task) throw new NotFoundError(`${describe(key)} not found`);
    assertTransition('runNow', task);
    if (task.status === 'BLOCKED' && task.dependsOn.length > 0) {
      const done = await tx.task.count({ where: { queueName: key.queueName, name: { in: task.dependsOn }, status: 'SUCCEEDED' } });
      if (done < new Set(task.dependsOn).size) {
        throw new ConflictError(`${describe(key)} waits for its dependencies (${task.dependsOn.join(', ')}); runTaskNow skips only a schedule time or a backoff`, { status: task.status });
      }
    }
    const now = dbNow(db);
    const moved = await tx.task.updateMany({
      where: { id: task.id, status: task.status, updateTime: task.updateTime },
      data: { status: 'READY', availableAt: now, updateTime: now },
    });
    if (moved.count === 0) throw new ConflictError(`${describe(key)} changed while runTaskNow ran; read it and try again`);
    const ran = { ...task, status: 'READY' as const, availableAt: now, updateTime: now };
    await notifyTaskChange(tx, ran);
    return ran;
  });
}

/** deleteQueue takes the queue's tasks with it, but never while one of them runs somewhere. */
export const refuseDeleteWhileRunning: QueueDeleteGuard = async (tx, queueName) => {
  const running = await tx.task.count({ where: { queueName, status: 'RUNNING' } });
  if (running > 0) throw new ConflictError(`queue "${queueName}" has ${running} RUNNING task(s); pause it and delete it once they finish`, { running });
};
