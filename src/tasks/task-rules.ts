import { z } from 'zod';
import { ConflictError } from '../errors.js';
import { queueName } from '../queues/queue-rules.js';
import { builtOncePerLimits, storableDate } from '../validation.js';
import { jitterFactor } from '../kit/jitter.js';
import { TASK_STATUSES, TASK_TRANSITIONS, type TaskAction, type TaskStatusName } from '../db/task-transitions.js';

// Every rule about what a task may hold and how its status may change; the GraphQL and JSON-RPC edges validate
// with these schemas. The status machine itself (TASK_TRANSITIONS) is src/db/task-transitions.ts: every SQL statement
// that moves a task takes its `from` statuses there.

/** Refuses, with a clear CONFLICT, an action the task's current status does not allow. */
export function assertTransition(action: TaskAction, task: { queueName: string; name: string; status: TaskStatusName }): void {
  const allowed: readonly TaskStatusName[] = TASK_TRANSITIONS[action].from;
  if (!allowed.includes(task.status)) {
    throw new ConflictError(
      `task "${task.name}" of queue "${task.queueName}" is ${task.status}; ${TASK_TRANSITIONS[action].by} accepts only ${allowed.join(' or ')} tasks`,
      { status: task.status, allowed },
    );
  }
}

export const taskName = z
  .string({ message: 'must be a string' })
  .regex(/^[A-Za-z0-9_.-]{1,256}$/, 'must be 1-256 characters of letters, digits, "_", "-" or "."');
export const taskStatus = z.enum(TASK_STATUSES, { message: `must be one of ${TASK_STATUSES.join(', ')}` });

/** Size of the answer kept in `result.body`. */
export const RESULT_BODY_LIMIT = 4096;

const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/, 'must be an HTTP header name');
/** Set by the dispatcher on every attempt; a target may not override them. */
export const RESERVED_HEADERS = ['x-task-queue', 'x-task-name', 'x-task-id', 'x-task-attempt', 'content-length', 'host'];

/** An attempt's deadline when the target names none. */
export const DEFAULT_TIMEOUT_SECONDS = 30;

/**
 * A task's HTTP target. `maxTimeoutSeconds` (TASK_MAX_TIMEOUT_SECONDS) bounds one attempt's deadline: each attempt
 * holds one of a process's task slots until it ends, so a target that never answers holds it that long.
 */
const taskTargetWithin = (maxTimeoutSeconds: number) => z.strictObject(
  {
    url: z
      .string({ message: 'must be a string' })
      .max(2048, 'at most 2048 characters')
      .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'must be an absolute http:// or https:// URL'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'], { message: 'must be GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS' }).default('POST'),
    headers: z
      .record(headerName, z.string({ message: 'must be a string' }).max(8192), { message: 'must be an object of header names to strings' })
      .refine((h) => Object.keys(h).every((k) => !RESERVED_HEADERS.includes(k.toLowerCase())), `may not set ${RESERVED_HEADERS.join(', ')}`)
      .default({}),
    /** Sent as is; when absent the task's payload is sent as JSON (methods that carry a body). */
    body: z.string({ message: 'must be a string' }).max(1_048_576, 'at most 1 MiB').optional(),
    timeoutSeconds: z
      .number({ message: 'must be a number' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(maxTimeoutSeconds, `must be at most ${maxTimeoutSeconds} (TASK_MAX_TIMEOUT_SECONDS: the longest attempt a gateway process holds a task slot for)`)
      .default(Math.min(DEFAULT_TIMEOUT_SECONDS, maxTimeoutSeconds)),
  },
  { message: 'must be an object {url, method?, headers?, body?, timeoutSeconds?}' },
);
export type TaskTarget = z.output<ReturnType<typeof taskTargetWithin>>;
/** The deadline an attempt runs with: what the target says, never above TASK_MAX_TIMEOUT_SECONDS (a task stored before it was lowered). */
export function attemptTimeoutSeconds(target: Pick<TaskTarget, 'timeoutSeconds'> | { timeoutSeconds?: number }, maxTimeoutSeconds: number): number {
  return Math.min(target.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS, maxTimeoutSeconds);
}

/**
 * Defaults of a task's retries (the Task table's column defaults say the same): 20 attempts, waits doubling from 1 s
 * up to 1 h, so that a target's outage of about 8 hours loses nothing.
 */
export const DEFAULT_MAX_ATTEMPTS = 20;
export const DEFAULT_MIN_BACKOFF_MS = 1000;
export const DEFAULT_MAX_BACKOFF_MS = 3_600_000;

const backoffMs = z.number({ message: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').max(86_400_000, 'must be at most 86400000 (one day)');

/** A new task, its attempt deadline bounded by TASK_MAX_TIMEOUT_SECONDS. */
export const createTaskRule = builtOncePerLimits((maxTimeoutSeconds: number) => z
  .strictObject({
    queueName,
    name: taskName,
    description: z.string({ message: 'must be a string' }).max(1024, 'at most 1024 characters').optional(),
    payload: z.unknown().optional(),
    target: taskTargetWithin(maxTimeoutSeconds),
    scheduleTime: storableDate('must be an ISO 8601 date-time').optional(),
    dependsOn: z.array(taskName, { message: 'must be an array of task names' }).max(100, 'at most 100 tasks').optional(),
    maxAttempts: z.number({ message: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(100, 'must be at most 100').optional(),
    minBackoffMs: backoffMs.optional(),
    maxBackoffMs: backoffMs.optional(),
  })
  .refine((t) => (t.minBackoffMs ?? DEFAULT_MIN_BACKOFF_MS) <= (t.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS), { message: 'must not be below minBackoffMs', path: ['maxBackoffMs'] })
  .refine((t) => !t.dependsOn?.includes(t.name), { message: 'a task cannot depend on itself', path: ['dependsOn'] }));
export type CreateTaskInput = z.output<ReturnType<typeof createTaskRule>>;

export const taskKey = z.strictObject({ queueName, name: taskName });
export type TaskKey = z.output<typeof taskKey>;

const searchText = (max: number) => z.string({ message: 'must be a string' }).min(1, 'must not be empty').max(max, `at most ${max} characters`);

// No refinement across fields (a range the wrong way round matches nothing): the legacy searchTasks picks from it.
export const taskFilter = z
  .strictObject({
    queueName: queueName.optional(),
    /** Name starts with this text. */
    name: z.string({ message: 'must be a string' }).max(256).optional(),
    /** Name contains this text, any case (a trigram index serves it across queues). */
    nameContains: searchText(256).optional(),
    /** Description contains this text, any case. */
    description: z.string({ message: 'must be a string' }).max(1024).optional(),
    status: taskStatus.optional(),
    /** The last attempt's error contains this text, any case. */
    errorContains: searchText(1024).optional(),
    /** Ended (finishTime) at or after this instant. */
    finishedAfter: storableDate('must be an ISO 8601 date-time').optional(),
    /** Ended before this instant. */
    finishedBefore: storableDate('must be an ISO 8601 date-time').optional(),
  });
export type TaskFilter = z.output<typeof taskFilter>;

/** The most tasks one bulk action (retryTasks, cancelTasks, purgeTasks) changes: a larger set takes several calls. */
export const BULK_TASK_LIMIT = 1000;

/** The tasks a bulk action applies to: the listed ones, or those matching a filter (at most `atMost` of them). */
export const taskSelection = z
  .strictObject({
    keys: z.array(taskKey, { message: 'must be a list of {queueName, name}' }).min(1, 'must name at least one task').max(BULK_TASK_LIMIT, `at most ${BULK_TASK_LIMIT} tasks`).optional(),
    filter: taskFilter.optional(),
    atMost: z.number({ message: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(BULK_TASK_LIMIT, `must be at most ${BULK_TASK_LIMIT}`).default(BULK_TASK_LIMIT),
  })
  .refine((s) => (s.keys === undefined) !== (s.filter === undefined), { message: 'give either keys or filter, not both', path: ['keys'] });
export type TaskSelection = z.output<typeof taskSelection>;

/** Backoff after the attempt-th failure: min * 2^(attempt-1) (Cloud Tasks' doubling), jittered, capped at max. */
export function backoffAfter(attempt: number, minMs: number, maxMs: number, random: () => number = Math.random): number {
  return Math.round(Math.min(maxMs, minMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30) * jitterFactor(random)));
}
