// The task status machine: who moves a task, from which statuses, to which. Every SQL statement that moves a task
// (src/db/sql/) takes its `from` statuses here, and so does the tasks area's check of a caller's action
// (src/tasks/task-rules.ts).

export const TASK_STATUSES = ['BLOCKED', 'READY', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type TaskStatusName = (typeof TASK_STATUSES)[number];

/** Who moves a task, from which statuses, to which. docs/decisions.md carries the same table (a test compares them). */
export const TASK_TRANSITIONS = {
  create: { by: 'createTask', from: [], to: ['BLOCKED', 'READY'] },
  unblock: { by: 'dispatcher: dependencies SUCCEEDED and scheduleTime reached', from: ['BLOCKED'], to: ['READY'] },
  claim: { by: 'dispatcher: a slot of the queue rate is free, queue OPEN and not paused', from: ['READY'], to: ['RUNNING'] },
  reclaim: { by: 'dispatcher: the lease of the process running it expired', from: ['RUNNING'], to: ['RUNNING', 'FAILED'] },
  succeed: { by: 'dispatcher: the target answered 2xx', from: ['RUNNING'], to: ['SUCCEEDED'] },
  retry: { by: 'dispatcher: the attempt failed and attempts remain (after backoff)', from: ['RUNNING'], to: ['READY'] },
  fail: { by: 'dispatcher: the attempt failed and maxAttempts are spent', from: ['RUNNING'], to: ['FAILED'] },
  handBack: { by: 'dispatcher: its process stops gracefully mid-attempt (the attempt is not counted)', from: ['RUNNING'], to: ['READY'] },
  cancel: { by: 'cancelTask', from: ['READY', 'BLOCKED'], to: ['CANCELLED'] },
  restart: { by: 'restartTask (attempts reset to 0)', from: ['FAILED'], to: ['READY'] },
  runNow: { by: 'runTaskNow: its schedule time or backoff is skipped (a BLOCKED task only once its dependencies SUCCEEDED)', from: ['READY', 'BLOCKED'], to: ['READY'] },
  purge: { by: 'purgeTasks: deleted, unless a task still waiting depends on it', from: ['SUCCEEDED', 'FAILED', 'CANCELLED'], to: [] },
} as const satisfies Record<string, { by: string; from: readonly TaskStatusName[]; to: readonly TaskStatusName[] }>;

export type TaskAction = keyof typeof TASK_TRANSITIONS;

/**
 * Statuses the gateway never moves a task out of by itself (only a caller's restartTask leaves FAILED): a status
 * subscription ends after one of them. A test derives the same set from TASK_TRANSITIONS.
 */
export const TASK_END_STATUSES: readonly TaskStatusName[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

/** The statuses an action may start from, as the SQL statements take them. */
export function fromStatuses(action: TaskAction): TaskStatusName[] {
  return [...TASK_TRANSITIONS[action].from];
}
