import type { ArgBuilder } from '@pothos/core';
import type { GraphQLResolveInfo } from 'graphql';
import type { GraphQLContext } from './context.js';
import type { AppTypes } from './builder.js';
import { builder } from './builder.js';
import { ActivityMinuteRef, activityArgs, activityWindow, defineConnection, dropNulls, dropNullsDeepExcept, pageArgs, toConnection, validate, windowFromArgs } from './common.js';
import { QueueRef } from './queues.js';
import * as tasks from '../tasks/tasks.js';
import { bulkTaskAction, type BulkTaskAction, type BulkTaskResult } from '../tasks/bulk-tasks.js';
import { createTaskRule, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_BACKOFF_MS, DEFAULT_MIN_BACKOFF_MS, DEFAULT_TIMEOUT_SECONDS, BULK_TASK_LIMIT, taskFilter, taskKey, taskSelection, type TaskKey, type TaskTarget } from '../tasks/task-rules.js';
import { TASK_END_STATUSES, TASK_STATUSES, type TaskStatusName } from '../db/task-transitions.js';
import { queueName } from '../queues/queue-rules.js';
import { taskEventKey } from '../db/sql/taskEvents.js';
import { queueTaskCounts } from '../db/sql/queueTaskCounts.js';
import { taskActivity } from '../db/sql/taskActivity.js';
import { liveState } from '../events/live.js';
import { ATTEMPT_ANSWER_LIMIT, ATTEMPT_HISTORY } from '../db/task-attempts.js';
import { CURRENT_ARG } from './live-args.js';
import { objectSlot } from '../kit/object-slot.js';

const TaskStatus = builder.enumType('TaskStatus', {
  description: 'Where a task stands; the transitions are listed in docs/decisions.md.',
  values: {
    BLOCKED: { description: 'Waiting for its dependencies to succeed or for its schedule time.' },
    READY: { description: 'Runs as soon as its queue (OPEN, not paused) has a free slot of its rate.' },
    RUNNING: { description: 'A gateway process is sending its request.' },
    SUCCEEDED: { description: 'The target answered 2xx.' },
    FAILED: { description: 'Every attempt failed; restartTask makes it READY again.' },
    CANCELLED: { description: 'Cancelled before it ran.' },
  },
});

const TaskOrderEnum = builder.enumType('TaskOrder', {
  description: 'Order of a task list.',
  values: {
    NAME_ASC: { description: 'By name, A to Z (the default).' },
    NAME_DESC: { description: 'By name, Z to A.' },
    CREATE_TIME_ASC: { description: 'Oldest first.' },
    CREATE_TIME_DESC: { description: 'Newest first.' },
    FINISH_TIME_DESC: { description: 'Ended most recently first (tasks not ended after them).' },
  },
});

const TaskTargetRef = builder.objectRef<TaskTarget>('TaskHttpTarget').implement({
  description: 'The HTTP request that running the task sends.',
  fields: (t) => ({
    url: t.exposeString('url', { description: 'Absolute http:// or https:// URL.' }),
    method: t.exposeString('method', { description: 'HTTP method (default POST).' }),
    headers: t.field({ type: 'JSON', description: 'Request headers, an object of strings.', resolve: (x) => x.headers ?? {} }),
    body: t.string({ nullable: true, description: 'Body sent as is; when absent, the payload is sent as JSON.', resolve: (x) => x.body ?? null }),
    timeoutSeconds: t.int({ description: 'Deadline of one attempt.', resolve: (x) => x.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS }),
  }),
});

const TaskResultRef = builder.objectRef<{ statusCode: number; body: string }>('TaskResult').implement({
  description: "The last attempt's answer.",
  fields: (t) => ({
    statusCode: t.exposeInt('statusCode', { description: 'HTTP status code.' }),
    body: t.exposeString('body', { description: 'The start of the answer (at most 4096 characters).' }),
  }),
});

/** One entry of Task.history as the statements write it (endedAttempt, src/db/sql/taskHistory.ts). */
interface StoredAttempt {
  attempt: number;
  /** A timestamp without time zone, as jsonb writes one: UTC. */
  startTime: string;
  finishTime: string;
  outcome: string;
  statusCode: number | null;
  error: string | null;
  answer: string | null;
}

const utc = (text: string) => new Date(`${text}Z`);

const TaskAttemptRef = builder.objectRef<StoredAttempt>('TaskAttempt').implement({
  description: `One ended attempt of a task (the last ${ATTEMPT_HISTORY} are kept).`,
  fields: (t) => ({
    attempt: t.exposeInt('attempt', { description: 'Its number, from 1 (a restart counts from 1 again).' }),
    startTime: t.field({ type: 'DateTime', description: 'When it started.', resolve: (x) => utc(x.startTime) }),
    finishTime: t.field({ type: 'DateTime', description: 'When it ended (for LOST: when its lease was found expired).', resolve: (x) => utc(x.finishTime) }),
    durationMs: t.int({ description: 'How long it took, in milliseconds.', resolve: (x) => Math.max(0, utc(x.finishTime).getTime() - utc(x.startTime).getTime()) }),
    outcome: t.exposeString('outcome', {
      description: 'SUCCEEDED, RETRY (failed; another attempt follows after a backoff), FAILED (failed, the last one) or LOST (its lease expired: the process running it stopped).',
    }),
    statusCode: t.exposeInt('statusCode', { nullable: true, description: "The target's HTTP status, when it answered." }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed.' }),
    answer: t.exposeString('answer', { nullable: true, description: `The start of the target's answer (at most ${ATTEMPT_ANSWER_LIMIT} characters of its body).` }),
  }),
});

export const TaskRef = builder.prismaObject('Task', {
  description: 'A task of a queue: running it sends its HTTP target.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Unique id, also sent as the X-Task-Id header.' }),
    queueName: t.exposeString('queueName', { description: 'The queue it belongs to.' }),
    queue: t.relation('queue', { description: 'The queue it belongs to.' }),
    name: t.exposeString('name', { description: 'Unique within its queue.' }),
    description: t.exposeString('description', { description: 'Free text.' }),
    status: t.field({ type: TaskStatus, description: 'Where the task stands.', resolve: (x) => x.status }),
    payload: t.expose('payload', { type: 'JSON', nullable: true, description: 'Data for the target; sent as the JSON body when the target has none.' }),
    target: t.field({ type: TaskTargetRef, description: 'What running the task does.', resolve: (x) => x.target as TaskTarget }),
    scheduleTime: t.expose('scheduleTime', { type: 'DateTime', nullable: true, description: 'Not started before this instant.' }),
    dependsOn: t.exposeStringList('dependsOn', { description: 'Tasks of the same queue that must succeed first.' }),
    attempts: t.exposeInt('attempts', { description: 'Attempts started so far.' }),
    maxAttempts: t.exposeInt('maxAttempts', { description: 'After this many failed attempts the task is FAILED.' }),
    minBackoffMs: t.exposeInt('minBackoffMs', { description: 'Wait after the first failed attempt; doubles after each further one.' }),
    maxBackoffMs: t.exposeInt('maxBackoffMs', { description: 'Longest wait between attempts.' }),
    lastError: t.exposeString('lastError', { nullable: true, description: 'Why the last attempt failed.' }),
    result: t.field({
      type: TaskResultRef,
      nullable: true,
      description: "The last attempt's answer, when there was one.",
      resolve: (x) => (x.result ?? null) as { statusCode: number; body: string } | null,
    }),
    createTime: t.expose('createTime', { type: 'DateTime', description: 'When it was created.' }),
    startTime: t.expose('startTime', { type: 'DateTime', nullable: true, description: 'When its last attempt started.' }),
    finishTime: t.expose('finishTime', { type: 'DateTime', nullable: true, description: 'When it became SUCCEEDED, FAILED or CANCELLED.' }),
    updateTime: t.expose('updateTime', { type: 'DateTime', description: 'When it last changed.' }),
    history: t.field({
      type: [TaskAttemptRef],
      description: `Its last ${ATTEMPT_HISTORY} ended attempts, newest first, across restarts: start, duration, HTTP status, error and the start of each answer.`,
      resolve: (x) => (Array.isArray(x.history) ? (x.history as unknown as StoredAttempt[]) : []),
    }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'While READY, when its next attempt may start (once a slot of its queue is free): its schedule time, or the end of the backoff after a failed attempt; null in any other status.',
      resolve: (x) => (x.status === 'READY' ? x.availableAt : null),
    }),
  }),
});

const TaskConnection = defineConnection('Task', TaskRef, 'task');

const TaskFilterInput = builder.inputType('TaskFilter', {
  description: 'Conditions a task must meet; all given conditions apply.',
  fields: (t) => ({
    queueName: t.string({ description: 'Queue name equals this.' }),
    name: t.string({ description: 'Name starts with this text.' }),
    description: t.string({ description: 'Description contains this text, in any case.' }),
    status: t.field({ type: TaskStatus, description: 'Status equals this.' }),
    nameContains: t.string({ description: 'Name contains this text, in any case (served by an index across queues).' }),
    errorContains: t.string({ description: "The last attempt's error contains this text, in any case." }),
    finishedAfter: t.field({ type: 'DateTime', description: 'Ended at or after this instant.' }),
    finishedBefore: t.field({ type: 'DateTime', description: 'Ended before this instant.' }),
  }),
});

const TaskKeyInput = builder.inputType('TaskKeyInput', {
  description: 'One task, by queue and name.',
  fields: (t) => ({
    queueName: t.string({ required: true, description: 'Queue name.' }),
    name: t.string({ required: true, description: 'Task name.' }),
  }),
});

const TaskSelectionInput = builder.inputType('TaskSelection', {
  description: `The tasks a bulk action applies to: either the listed ones or those matching a filter, at most ${BULK_TASK_LIMIT} per call.`,
  fields: (t) => ({
    keys: t.field({ type: [TaskKeyInput], description: `These tasks (1-${BULK_TASK_LIMIT}).` }),
    filter: t.field({ type: TaskFilterInput, description: 'The tasks matching this filter.' }),
    atMost: t.int({ description: `With a filter: change at most this many (1-${BULK_TASK_LIMIT}, default ${BULK_TASK_LIMIT}); \`more\` says whether others remain.` }),
  }),
});

const TaskKeyRef = builder.objectRef<TaskKey>('TaskKey').implement({
  description: 'A task, by queue and name.',
  fields: (t) => ({
    queueName: t.exposeString('queueName', { description: 'Queue name.' }),
    name: t.exposeString('name', { description: 'Task name.' }),
  }),
});

const BulkTaskActionEnum = builder.enumType('BulkTaskAction', {
  description: 'What a bulk action did to the tasks it changed.',
  values: {
    RETRY: { description: 'FAILED tasks made READY again, attempts reset (as restartTask).' },
    CANCEL: { description: 'READY or BLOCKED tasks CANCELLED (as cancelTask).' },
    PURGE: { description: 'Ended tasks (SUCCEEDED, FAILED, CANCELLED) deleted, except one a BLOCKED task depends on.' },
  },
});

const BulkTaskResultRef = builder.objectRef<BulkTaskResult>('BulkTaskResult').implement({
  description: 'What one bulk action on tasks did.',
  fields: (t) => ({
    action: t.field({ type: BulkTaskActionEnum, description: 'The action.', resolve: (r) => r.action.toUpperCase() as 'RETRY' | 'CANCEL' | 'PURGE' }),
    matched: t.exposeInt('matched', { description: 'Tasks selected whose status allows the action.' }),
    changed: t.exposeInt('changed', { description: 'Tasks changed (fewer than matched when some moved meanwhile, or a waiting task depends on one to purge).' }),
    tasks: t.field({ type: [TaskKeyRef], description: 'The tasks changed.', resolve: (r) => r.tasks }),
    more: t.exposeBoolean('more', { description: 'The filter matched more tasks than atMost: call again for the next ones.' }),
  }),
});

const TaskTargetInput = builder.inputType('TaskHttpTargetInput', {
  description: 'The HTTP request running the task sends.',
  fields: (t) => ({
    url: t.string({ required: true, description: 'Absolute http:// or https:// URL.' }),
    method: t.string({ description: 'GET, POST (default), PUT, PATCH, DELETE, HEAD or OPTIONS.' }),
    headers: t.field({ type: 'JSON', description: 'Request headers, an object of strings (X-Task-* are set by the gateway).' }),
    body: t.string({ description: 'Body sent as is; when absent, the payload is sent as JSON.' }),
    timeoutSeconds: t.int({ description: 'Deadline of one attempt in seconds, from 1 to TASK_MAX_TIMEOUT_SECONDS (600 unless set; default 30).' }),
  }),
});

const CreateTaskInput = builder.inputType('CreateTaskInput', {
  description: 'A new task.',
  fields: (t) => ({
    queueName: t.string({ required: true, description: 'An existing OPEN queue.' }),
    name: t.string({ required: true, description: 'Unique within the queue.' }),
    description: t.string({ description: 'Free text.' }),
    payload: t.field({ type: 'JSON', description: 'Data for the target.' }),
    target: t.field({ type: TaskTargetInput, required: true, description: 'What running the task does.' }),
    scheduleTime: t.field({ type: 'DateTime', description: 'Not started before this instant.' }),
    dependsOn: t.stringList({ description: 'Existing tasks of the same queue that must succeed first.' }),
    maxAttempts: t.int({ description: `Attempts before FAILED, 1-100 (default ${DEFAULT_MAX_ATTEMPTS}).` }),
    minBackoffMs: t.int({ description: `Wait after the first failed attempt, doubled after each further one, each wait jittered by 20 % (default ${DEFAULT_MIN_BACKOFF_MS}).` }),
    maxBackoffMs: t.int({ description: `Longest wait between attempts (default ${DEFAULT_MAX_BACKOFF_MS}: with the other defaults, retries span about 8 hours).` }),
  }),
});

const TasksSummaryRef = builder.objectRef<tasks.TasksSummary>('TasksSummary').implement({
  description: 'How many tasks of a queue are in each status.',
  fields: (t) => ({
    queueName: t.exposeString('queueName', { description: 'The queue.' }),
    total: t.exposeInt('total', { description: 'All its tasks.' }),
    ...Object.fromEntries(
      TASK_STATUSES.map((s) => [s.toLowerCase(), t.int({ description: `Tasks with status ${s}.`, resolve: (x) => x[s] })]),
    ),
  }),
});

/** One status change, made once per change and handed to every subscriber of the task. */
type TaskStatusChange = { queueName: string; name: string; status: TaskStatusName };

/** The task as it is after a status change: read once per change for all the subscribers that select it. */
const taskAfterChange = objectSlot<TaskStatusChange, Promise<tasks.Task | null>>('task after change');

const TaskStatusChangeRef = builder
  .objectRef<TaskStatusChange>('TaskStatusChange')
  .implement({
    description: 'One status change of a task, in the order they happened.',
    fields: (t) => ({
      queueName: t.exposeString('queueName', { description: 'The queue.' }),
      name: t.exposeString('name', { description: 'The task.' }),
      status: t.field({ type: TaskStatus, description: 'The status the task moved to.', resolve: (x) => x.status }),
      task: t.prismaField({
        type: 'Task',
        nullable: true,
        description: 'The task as it is now (it may have moved on since); null once deleted.',
        // The whole row (relations a selection asks for are loaded by Pothos after it), shared by this change's subscribers.
        resolve: (_query, x, _args, ctx) => {
          let read = taskAfterChange.get(x);
          if (!read) taskAfterChange.set(x, (read = ctx.db.task.findUnique({ where: { queueName_name: { queueName: x.queueName, name: x.name } } })));
          return read;
        },
      }),
    }),
  });

const TASK_JSON_KEYS = new Set(['headers', 'payload']);
const keyArgs = (arg: ArgBuilder<AppTypes>) => ({
  queueName: arg.string({ required: true, description: 'Queue name.' }),
  name: arg.string({ required: true, description: 'Task name.' }),
});

async function taskPage(ctx: GraphQLContext, args: { filter?: object | null; orderBy?: string | null; first?: number | null; after?: string | null }, info: GraphQLResolveInfo, fixed: { queueName?: string } = {}) {
  const filter = validate(taskFilter, { ...dropNulls(args.filter), ...fixed }, 'filter');
  return toConnection(await tasks.findTasks(ctx.db, filter, (args.orderBy ?? 'NAME_ASC') as tasks.TaskOrder, windowFromArgs(ctx, args, info)));
}

builder.objectField(QueueRef, 'tasks', (t) =>
  t.field({
    type: TaskConnection,
    description: "The queue's tasks matching a filter, ordered (by name unless told otherwise), a page at a time.",
    args: {
      filter: t.arg({ type: TaskFilterInput, description: 'Conditions on the tasks (queueName is this queue).' }),
      orderBy: t.arg({ type: TaskOrderEnum, description: 'Order (default NAME_ASC).' }),
      ...pageArgs(t.arg),
    },
    resolve: (queue, args, ctx, info) => taskPage(ctx, args, info, { queueName: queue.name }),
  }),
);

builder.objectField(QueueRef, 'tasksSummary', (t) =>
  t.field({
    type: TasksSummaryRef,
    description: "The count of every status of the queue's tasks, zeros included (the queues of one page are counted together).",
    resolve: async (queue, _args, ctx) => {
      const found = (await queueTaskCounts(ctx.db, queue.name))?.counts ?? {};
      const counts = Object.fromEntries(TASK_STATUSES.map((s) => [s, found[s] ?? 0])) as Record<TaskStatusName, number>;
      return { queueName: queue.name, total: Object.values(counts).reduce((a, b) => a + b, 0), ...counts };
    },
  }),
);

builder.queryFields((t) => ({
  task: t.prismaField({
    type: 'Task',
    extensions: { scope: 'tasks:read' },
    description: 'One task by queue and name.',
    args: keyArgs(t.arg),
    resolve: (_query, _root, args, ctx) => tasks.getTask(ctx.db, validate(taskKey, args)),
  }),
  tasks: t.field({
    type: TaskConnection,
    extensions: { scope: 'tasks:read' },
    description: 'Tasks matching a filter (queue, name prefix, description text, status), ordered, a page at a time.',
    args: {
      filter: t.arg({ type: TaskFilterInput, description: 'Conditions on the tasks.' }),
      orderBy: t.arg({ type: TaskOrderEnum, description: 'Order (default NAME_ASC).' }),
      ...pageArgs(t.arg),
    },
    resolve: (_root, args, ctx, info) => taskPage(ctx, args, info),
  }),
  taskActivity: t.field({
    type: [ActivityMinuteRef],
    extensions: { scope: 'tasks:read' },
    description: 'Tasks that ended (SUCCEEDED, FAILED) in each of the last minutes, of every queue or of one, oldest minute first, zeros included.',
    args: { ...activityArgs(t.arg), queueName: t.arg.string({ description: 'Only this queue\'s tasks.' }) },
    resolve: (_root, args, ctx) =>
      taskActivity(ctx.db, activityWindow(args.minutes), args.queueName == null ? undefined : validate(queueName, args.queueName, 'queueName')),
  }),
  tasksSummary: t.field({
    type: TasksSummaryRef,
    extensions: { scope: 'tasks:read' },
    description: "The count of every status of a queue's tasks, zeros included.",
    args: { queueName: t.arg.string({ required: true, description: 'Queue name.' }) },
    resolve: (_root, args, ctx) => tasks.tasksSummary(ctx.db, validate(queueName, args.queueName, 'queueName')),
  }),
}));

builder.mutationFields((t) => {
  const byKey = (description: string, run: (db: GraphQLContext['db'], key: TaskKey) => Promise<tasks.Task>) =>
    t.prismaField({
      type: 'Task',
      extensions: { scope: 'tasks:write' },
      description,
      args: keyArgs(t.arg),
      resolve: (_q, _r, args, ctx) => run(ctx.db, validate(taskKey, args)),
    });
  const bulk = (action: BulkTaskAction, description: string) =>
    t.field({
      type: BulkTaskResultRef,
      extensions: { scope: 'tasks:write' },
      description: `${description} Selected by a list or a filter, at most ${BULK_TASK_LIMIT} tasks per call, in one transaction; tasks whose status does not allow it are left alone. Logged with the caller.`,
      args: { select: t.arg({ type: TaskSelectionInput, required: true, description: 'The tasks.' }) },
      resolve: async (_r, args, ctx) => {
        const selection = validate(taskSelection, dropNullsDeepExcept(args.select, new Set()), 'select');
        const result = await bulkTaskAction(ctx.db, action, selection);
        ctx.log.info(
          { action, caller: ctx.principal?.name ?? null, requestId: ctx.requestId, selection: selection.keys ? { keys: selection.keys.length } : { filter: selection.filter, atMost: selection.atMost }, matched: result.matched, changed: result.changed, more: result.more },
          `bulk ${action} of tasks: ${result.changed} changed`,
        );
        return result;
      },
    });
  return {
    createTask: t.prismaField({
      type: 'Task',
      extensions: { scope: 'tasks:write' },
      description: 'Creates a task: READY, or BLOCKED until its dependencies succeed and its schedule time comes. Refused when the queue is missing or CLOSE.',
      args: { input: t.arg({ type: CreateTaskInput, required: true, description: 'The task.' }) },
      resolve: (_q, _r, args, ctx) => tasks.createTask(ctx.db, validate(createTaskRule(ctx.config.TASK_MAX_TIMEOUT_SECONDS), dropNullsDeepExcept(args.input, TASK_JSON_KEYS), 'input'), ctx.outbound),
    }),
    cancelTask: byKey('Cancels a READY or BLOCKED task (it becomes CANCELLED); any other status is a CONFLICT that changes nothing.', tasks.cancelTask),
    restartTask: byKey('Makes a FAILED task READY again with its attempts reset; any other status is a CONFLICT that changes nothing.', tasks.restartTask),
    runTaskNow: byKey(
      'Runs a task waiting on its schedule time or a retry backoff now: it becomes READY and due (its queue\'s rate and pause still apply). A BLOCKED task waiting for dependencies, or one RUNNING or ended, is a CONFLICT that changes nothing.',
      tasks.runTaskNow,
    ),
    retryTasks: bulk('retry', 'Makes FAILED tasks READY again with their attempts reset (restartTask for many).'),
    cancelTasks: bulk('cancel', 'Cancels READY and BLOCKED tasks (cancelTask for many).'),
    purgeTasks: bulk('purge', 'Deletes ended tasks (SUCCEEDED, FAILED, CANCELLED), except one a BLOCKED task of its queue depends on.'),
  };
});

builder.subscriptionFields((t) => ({
  taskStatusChanged: t.field({
    type: TaskStatusChangeRef,
    extensions: { scope: 'tasks:read' },
    description:
      'Every status change of one task, in order, made by any gateway process (READY, RUNNING, ...). Completes after an end status (SUCCEEDED, FAILED, CANCELLED), which is sent at once when the task is already in one; restartTask starts a new run to follow with a new subscription, unless `followRestarts`.',
    args: {
      ...keyArgs(t.arg),
      current: t.arg.boolean(CURRENT_ARG),
      followRestarts: t.arg.boolean({
        description: 'Does not complete at an end status: a restart (restartTask, by anyone) and the run after it come on the same subscription (default false).',
      }),
    },
    subscribe: (_root, args, ctx) => {
      const key = validate(taskKey, { queueName: args.queueName, name: args.name });
      const followRestarts = args.followRestarts ?? false;
      const change = (status: TaskStatusName | null): TaskStatusChange | null => (status === null ? null : { queueName: key.queueName, name: key.name, status });
      return liveState<TaskStatusChange | null>(
        ctx.bus,
        'task',
        taskEventKey(key.queueName, key.name),
        {
          read: async () => change(await tasks.taskStatusOf(ctx.db, key)),
          fromEvent: (status) => change(status as TaskStatusName), // task events carry the new status, in commit order
          fingerprint: (state) => state?.status ?? '',
          emitsAfterResync: (state) => state !== null,
          // Followers that stop at an end status and those that follow restarts do not share a feed.
          ...(followRestarts ? { variant: 'restarts' } : { isFinal: (state: TaskStatusChange | null) => state !== null && TASK_END_STATUSES.includes(state.status) }),
        },
        { current: args.current ?? false },
      );
    },
    resolve: (change) => change as unknown as TaskStatusChange,
  }),
  tasksSummaryChanged: t.field({
    type: TasksSummaryRef,
    extensions: { scope: 'tasks:read' },
    description: "The queue's task counts each time one of its tasks changes, in any gateway process.",
    args: { queueName: t.arg.string({ required: true, description: 'Queue name.' }), current: t.arg.boolean(CURRENT_ARG) },
    subscribe: (_root, args, ctx) => {
      const name = validate(queueName, args.queueName, 'queueName');
      return liveState(ctx.bus, 'queueTasks', name, { read: () => tasks.tasksSummary(ctx.db, name) }, { current: args.current ?? false });
    },
    resolve: (summary) => summary,
  }),
}));
