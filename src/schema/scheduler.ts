import type { GraphQLContext } from './context.js';
import { dbNow } from '../db/clock.js';
import { builder } from './builder.js';
import { ActivityMinuteRef, activityArgs, activityWindow, firstItems, defineConnection, dropNullsDeepExcept, pageArgs, toConnection, validate, windowFromArgs } from './common.js';
import { jobActivity } from '../db/sql/jobActivity.js';
import * as scheduler from '../scheduler/scheduler.js';
import { jobFilter, jobInstanceFilter, jobName, jobRules, HTTP_METHODS, type JobInstanceOrder, type JobOrder, type StoredTarget } from '../scheduler/scheduler-rules.js';
import { liveChanges } from '../events/live.js';

const JobStatus = builder.enumType('JobStatus', {
  description: 'Whether a job fires on its schedule.',
  values: {
    ENABLED: { description: 'The job fires at each occurrence of its schedule.' },
    PAUSED: { description: 'Automatic firing is suspended; `runJob` still starts it.' },
  },
});
const MisfirePolicy = builder.enumType('JobMisfirePolicy', {
  description: 'What happens to occurrences missed by more than SCHEDULER_MISFIRE_THRESHOLD_MS (for example while every gateway was down), after Quartz.',
  values: {
    FIRE_ONCE: { description: 'Fire one instance now (misfire FIRED_LATE), drop the other missed occurrences (the default).' },
    SKIP: { description: 'Record one SKIPPED instance (misfire SKIPPED), fire nothing, continue with the next occurrence.' },
  },
});
const InstanceStatus = builder.enumType('JobInstanceStatus', {
  description: 'Where a job instance stands.',
  values: {
    RUNNING: { description: 'The target is being performed (retries included).' },
    SUCCEEDED: { description: 'The target succeeded: HTTP 2xx, or the created task succeeded.' },
    FAILED: { description: 'The target failed after the retries the retry policy allows.' },
    SKIPPED: { description: 'A missed occurrence that the SKIP misfire policy did not fire.' },
  },
});
const Trigger = builder.enumType('JobInstanceTrigger', {
  description: 'Why an instance started.',
  values: {
    SCHEDULE: { description: 'An occurrence of the cron schedule.' },
    MANUAL: { description: 'A `runJob` request.' },
  },
});
const Misfire = builder.enumType('JobInstanceMisfire', {
  description: 'How the misfire rule treated a late occurrence.',
  values: {
    FIRED_LATE: { description: 'The occurrence was missed and fired once, late (policy FIRE_ONCE).' },
    SKIPPED: { description: 'The occurrence was missed and not fired (policy SKIP).' },
  },
});
const TargetKind = builder.enumType('JobTargetKind', {
  description: 'What a job does when it fires.',
  values: {
    HTTP: { description: 'Sends an HTTP request.' },
    TASK: { description: 'Creates a task in a queue from a template.' },
  },
});
const HttpMethod = builder.enumType('HttpMethod', {
  description: 'HTTP request method.',
  values: Object.fromEntries(HTTP_METHODS.map((m) => [m, { description: `HTTP ${m}.` }])) as Record<(typeof HTTP_METHODS)[number], { description: string }>,
});
const JobOrderEnum = builder.enumType('JobOrder', {
  description: 'Order of a job list.',
  values: {
    NAME_ASC: { description: 'By name, A to Z (the default).' },
    NAME_DESC: { description: 'By name, Z to A.' },
    NEXT_RUN_TIME_ASC: { description: 'Soonest next run first; paused jobs last.' },
    CREATE_TIME_DESC: { description: 'Newest first.' },
  },
});
const JobInstanceOrderEnum = builder.enumType('JobInstanceOrder', {
  description: 'Order of a job instance list.',
  values: {
    SCHEDULED_TIME_DESC: { description: 'Latest scheduled time first (the default).' },
    SCHEDULED_TIME_ASC: { description: 'Earliest scheduled time first.' },
  },
});

type Http = Extract<StoredTarget, { kind: 'HTTP' }>;
type Task = Extract<StoredTarget, { kind: 'TASK' }>;
const HttpTarget = builder.objectRef<Http>('HttpTarget').implement({
  description: 'An HTTP request sent at each firing; 2xx is success. Headers x-scheduler-job-name, x-scheduler-instance-id, x-scheduler-schedule-time and x-scheduler-attempt are added.',
  fields: (t) => ({
    url: t.exposeString('url', { description: 'Absolute http(s) URL.' }),
    httpMethod: t.field({ type: HttpMethod, description: 'Method (default POST).', resolve: (h) => h.httpMethod }),
    headers: t.field({ type: 'JSON', description: 'Request headers, an object of strings.', resolve: (h) => h.headers }),
    body: t.exposeString('body', { nullable: true, description: 'Request body (not sent with GET or HEAD).' }),
  }),
});
const TaskTarget = builder.objectRef<Task>('TaskTarget').implement({
  description: 'A task created in a queue from a template at each firing; the task succeeding is success.',
  fields: (t) => ({
    queue: t.exposeString('queue', { description: 'Name of the queue the task is created in.' }),
    template: t.field({ type: 'JSON', description: 'The task template, handed to the tasks area as is.', resolve: (x) => x.template }),
  }),
});
const JobTarget = builder.objectRef<StoredTarget>('JobTarget').implement({
  description: 'What a job does when it fires: exactly one of `http` and `task` is set.',
  fields: (t) => ({
    kind: t.field({ type: TargetKind, description: 'HTTP or TASK.', resolve: (x) => x.kind }),
    http: t.field({ type: HttpTarget, nullable: true, description: 'The HTTP request, for kind HTTP.', resolve: (x) => (x.kind === 'HTTP' ? x : null) }),
    task: t.field({ type: TaskTarget, nullable: true, description: 'The task, for kind TASK.', resolve: (x) => (x.kind === 'TASK' ? x : null) }),
  }),
});
const RetryConfig = builder.objectRef<scheduler.Job>('RetryConfig').implement({
  description: 'How a failed firing is retried (Cloud Scheduler RetryConfig): the wait doubles from minBackoffSeconds maxDoublings times, then grows linearly, capped at maxBackoffSeconds.',
  fields: (t) => ({
    retryCount: t.exposeInt('retryCount', { description: 'Retries after the first attempt (0-5, default 0).' }),
    minBackoffSeconds: t.float({ description: 'First wait (default 5).', resolve: (j) => j.minBackoffMs / 1000 }),
    maxBackoffSeconds: t.float({ description: 'Longest wait (default 3600).', resolve: (j) => j.maxBackoffMs / 1000 }),
    maxDoublings: t.exposeInt('maxDoublings', { description: 'Times the wait doubles (default 5).' }),
  }),
});

export const JobRef = builder.prismaObject('Job', {
  description: 'A cron job: fires its target at each occurrence of its schedule, exactly once across all gateway processes.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Unique name: 1-128 letters, digits, "_", "-" or ".".' }),
    description: t.exposeString('description', { description: 'Free text.' }),
    schedule: t.exposeString('schedule', { description: 'Cron expression: 5 fields, or 6 with seconds first; nicknames like @daily too.' }),
    timeZone: t.exposeString('timeZone', { description: 'IANA time zone the schedule is read in (default UTC).' }),
    target: t.field({ type: JobTarget, description: 'What the job does when it fires.', resolve: (j) => j.target as unknown as StoredTarget }),
    status: t.field({ type: JobStatus, description: 'ENABLED fires on schedule; PAUSED does not.', resolve: (j) => j.status }),
    misfirePolicy: t.field({ type: MisfirePolicy, description: 'What happens to occurrences missed beyond the misfire threshold.', resolve: (j) => j.misfirePolicy }),
    retryConfig: t.field({ type: RetryConfig, description: 'Retries of a failed firing.', resolve: (j) => j }),
    timeoutSeconds: t.exposeInt('timeoutSeconds', { description: 'Deadline of one attempt, in seconds (default 180).' }),
    lastRunTime: t.expose('lastRunTime', { type: 'DateTime', nullable: true, description: 'When an instance last started (scheduled or manual).' }),
    nextRunTime: t.expose('nextRunTime', { type: 'DateTime', nullable: true, description: 'The next occurrence to fire, in UTC; null while paused or when the schedule never fires again.' }),
    createTime: t.expose('createTime', { type: 'DateTime', description: 'When the job was created.' }),
    updateTime: t.expose('updateTime', { type: 'DateTime', description: 'When the job was last changed (pause and resume set it).' }),
    recentInstances: t.relation('instances', {
      description: "The job's latest instances, latest scheduled time first: a list's glance (`jobInstances` pages through all).",
      args: { first: t.arg.int({ description: 'How many (default DEFAULT_PAGE_SIZE, at most MAX_PAGE_SIZE).' }) },
      // The rule every page follows, so the query cost counts this list as it runs (src/pipeline/list-bounds.ts).
      query: (args, ctx) => ({ orderBy: [{ scheduledTime: 'desc' }, { id: 'desc' }], take: firstItems(ctx, args.first) }),
    }),
  }),
});

export const JobInstanceRef = builder.prismaObject('JobInstance', {
  description: 'One execution of a job.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Unique id (UUID).' }),
    jobName: t.exposeString('jobName', { description: 'Name of the job.' }),
    trigger: t.field({ type: Trigger, description: 'SCHEDULE or MANUAL.', resolve: (i) => i.trigger }),
    status: t.field({ type: InstanceStatus, description: 'RUNNING, SUCCEEDED, FAILED or SKIPPED.', resolve: (i) => i.status }),
    misfire: t.field({ type: Misfire, nullable: true, description: 'Set when the misfire rule applied to this occurrence; null when it fired on time.', resolve: (i) => i.misfire }),
    scheduledTime: t.expose('scheduledTime', { type: 'DateTime', description: 'The occurrence fired (the request time for MANUAL instances).' }),
    startTime: t.expose('startTime', { type: 'DateTime', description: 'When the instance started.' }),
    finishTime: t.expose('finishTime', { type: 'DateTime', nullable: true, description: 'When it finished; null while RUNNING.' }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made (first try plus retries).' }),
    result: t.expose('result', { type: 'JSON', nullable: true, description: 'What the target answered: {httpStatus, body} or {taskId}.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed; null unless FAILED.' }),
  }),
});

const JobConnection = defineConnection('Job', JobRef, 'job');
const JobInstanceConnection = defineConnection('JobInstance', JobInstanceRef, 'job instance');

const JobFilterInput = builder.inputType('JobFilter', {
  description: 'Conditions a job must meet; all given conditions apply.',
  fields: (t) => ({
    namePrefix: t.string({ description: 'Name starts with this text.' }),
    status: t.field({ type: JobStatus, description: 'Status equals this.' }),
    targetKind: t.field({ type: TargetKind, description: 'Target kind equals this.' }),
    queue: t.string({ description: 'The job creates tasks in this queue.' }),
  }),
});
const JobInstanceFilterInput = builder.inputType('JobInstanceFilter', {
  description: 'Conditions a job instance must meet; all given conditions apply.',
  fields: (t) => ({
    jobName: t.string({ description: 'Instances of this job.' }),
    status: t.field({ type: InstanceStatus, description: 'Status equals this.' }),
    trigger: t.field({ type: Trigger, description: 'Trigger equals this.' }),
    from: t.field({ type: 'DateTime', description: 'scheduledTime at or after this instant.' }),
    to: t.field({ type: 'DateTime', description: 'scheduledTime before this instant.' }),
  }),
});
const HttpTargetInput = builder.inputType('HttpTargetInput', {
  description: 'An HTTP request to send at each firing.',
  fields: (t) => ({
    url: t.string({ required: true, description: 'Absolute http(s) URL.' }),
    httpMethod: t.field({ type: HttpMethod, description: 'Method (default POST).' }),
    headers: t.field({ type: 'JSON', description: 'Request headers, an object of strings.' }),
    body: t.string({ description: 'Request body.' }),
  }),
});
const TaskTargetInput = builder.inputType('TaskTargetInput', {
  description: 'A task to create in a queue at each firing.',
  fields: (t) => ({
    queue: t.string({ required: true, description: 'Name of an existing queue.' }),
    template: t.field({ type: 'JSON', description: 'The task template (an object).' }),
  }),
});
const JobTargetInput = builder.inputType('JobTargetInput', {
  description: 'What the job does: give exactly one of `http` and `task`.',
  fields: (t) => ({
    http: t.field({ type: HttpTargetInput, description: 'Send an HTTP request.' }),
    task: t.field({ type: TaskTargetInput, description: 'Create a task in a queue.' }),
  }),
});
const RetryConfigInput = builder.inputType('RetryConfigInput', {
  description: 'Retries of a failed firing; absent fields keep their value (or default).',
  fields: (t) => ({
    retryCount: t.int({ description: 'Retries after the first attempt (0-5).' }),
    minBackoffSeconds: t.float({ description: 'First wait in seconds (0-3600).' }),
    maxBackoffSeconds: t.float({ description: 'Longest wait in seconds (0-3600).' }),
    maxDoublings: t.int({ description: 'Times the wait doubles (0-16).' }),
  }),
});
const CreateJobInput = builder.inputType('CreateJobInput', {
  description: 'A new job.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Unique name.' }),
    description: t.string({ description: 'Free text.' }),
    schedule: t.string({ required: true, description: 'Cron expression, 5 fields or 6 with seconds first.' }),
    timeZone: t.string({ description: 'IANA time zone (default UTC).' }),
    target: t.field({ type: JobTargetInput, required: true, description: 'What the job does.' }),
    status: t.field({ type: JobStatus, description: 'Initial status (default ENABLED).' }),
    retryConfig: t.field({ type: RetryConfigInput, description: 'Retries of a failed firing.' }),
    timeoutSeconds: t.int({ description: 'Deadline of one attempt (1-1800 s, default 180).' }),
    misfirePolicy: t.field({ type: MisfirePolicy, description: 'Misfire rule (default FIRE_ONCE).' }),
  }),
});
const UpdateJobInput = builder.inputType('UpdateJobInput', {
  description: 'Changes to a job; absent fields stay as they are. A new schedule or time zone recomputes nextRunTime.',
  fields: (t) => ({
    description: t.string({ description: 'Free text.' }),
    schedule: t.string({ description: 'Cron expression.' }),
    timeZone: t.string({ description: 'IANA time zone.' }),
    target: t.field({ type: JobTargetInput, description: 'What the job does (replaces the target).' }),
    retryConfig: t.field({ type: RetryConfigInput, description: 'Retries of a failed firing.' }),
    timeoutSeconds: t.int({ description: 'Deadline of one attempt.' }),
    misfirePolicy: t.field({ type: MisfirePolicy, description: 'Misfire rule.' }),
  }),
});

const dropNullsDeep = (input: unknown) => dropNullsDeepExcept(input, SCHEDULER_JSON_KEYS);
const SCHEDULER_JSON_KEYS = new Set(['headers', 'template']);

builder.queryFields((t) => ({
  job: t.prismaField({
    type: 'Job',
    extensions: { scope: 'scheduler:read' },
    description: 'One job by name.',
    args: { name: t.arg.string({ required: true, description: 'Job name.' }) },
    resolve: (_q, _r, args, ctx) => scheduler.getJob(ctx.db, validate(jobName, args.name, 'name')),
  }),
  jobs: t.field({
    type: JobConnection,
    extensions: { scope: 'scheduler:read' },
    description: 'Jobs matching a filter, ordered (by name unless told otherwise), a page at a time.',
    args: {
      filter: t.arg({ type: JobFilterInput, description: 'Conditions on the jobs.' }),
      orderBy: t.arg({ type: JobOrderEnum, description: 'Order (default NAME_ASC).' }),
      ...pageArgs(t.arg),
    },
    resolve: async (_r, args, ctx, info) => {
      const filter = validate(jobFilter, dropNullsDeep(args.filter), 'filter');
      return toConnection(await scheduler.findJobs(ctx.db, filter, (args.orderBy ?? 'NAME_ASC') as JobOrder, windowFromArgs(ctx, args, info)));
    },
  }),
  jobActivity: t.field({
    type: [ActivityMinuteRef],
    extensions: { scope: 'scheduler:read' },
    description: 'Job instances of every job that ended (SUCCEEDED, FAILED) in each of the last minutes, oldest minute first, zeros included.',
    args: activityArgs(t.arg),
    resolve: (_root, args, ctx) => jobActivity(ctx.db, activityWindow(args.minutes)),
  }),
  jobInstance: t.prismaField({
    type: 'JobInstance',
    extensions: { scope: 'scheduler:read' },
    description: 'One job instance by id.',
    args: { id: t.arg.string({ required: true, description: 'Instance id.' }) },
    resolve: (_q, _r, args, ctx) => scheduler.getJobInstance(ctx.db, args.id),
  }),
  jobInstances: t.field({
    type: JobInstanceConnection,
    extensions: { scope: 'scheduler:read' },
    description: 'Job instances by job name, status, trigger and scheduled-time range, latest first unless told otherwise.',
    args: {
      filter: t.arg({ type: JobInstanceFilterInput, description: 'Conditions on the instances.' }),
      orderBy: t.arg({ type: JobInstanceOrderEnum, description: 'Order (default SCHEDULED_TIME_DESC).' }),
      ...pageArgs(t.arg),
    },
    resolve: async (_r, args, ctx, info) => {
      const filter = validate(jobInstanceFilter, dropNullsDeep(args.filter), 'filter');
      const order = (args.orderBy ?? 'SCHEDULED_TIME_DESC') as JobInstanceOrder;
      return toConnection(await scheduler.findJobInstances(ctx.db, filter, order, windowFromArgs(ctx, args, info)));
    },
  }),
}));

builder.mutationFields((t) => {
  const byName = (description: string, run: (ctx: GraphQLContext, name: string) => Promise<scheduler.Job>) =>
    t.prismaField({
      type: 'Job',
      extensions: { scope: 'scheduler:write' },
      description,
      args: { name: t.arg.string({ required: true, description: 'Job name.' }) },
      resolve: (_q, _r, args, ctx) => run(ctx, validate(jobName, args.name, 'name')),
    });
  return {
    createJob: t.prismaField({
      type: 'Job',
      extensions: { scope: 'scheduler:write' },
      description: 'Creates a job; CONFLICT when the name is taken, BAD_USER_INPUT for a bad cron expression or time zone.',
      args: { input: t.arg({ type: CreateJobInput, required: true, description: 'The job.' }) },
      resolve: (_q, _r, args, ctx) => scheduler.createJob(ctx.db, validate(jobRules.create, dropNullsDeep(args.input), 'input'), ctx.outbound),
    }),
    updateJob: t.prismaField({
      type: 'Job',
      extensions: { scope: 'scheduler:write' },
      description: 'Changes a job and returns it; a new schedule or time zone recomputes nextRunTime.',
      args: {
        name: t.arg.string({ required: true, description: 'Job name.' }),
        input: t.arg({ type: UpdateJobInput, required: true, description: 'The changes.' }),
      },
      resolve: (_q, _r, args, ctx) => scheduler.updateJob(ctx.db, validate(jobName, args.name, 'name'), validate(jobRules.update, dropNullsDeep(args.input), 'input'), ctx.outbound),
    }),
    deleteJob: byName('Deletes a job and its instances; returns the deleted job.', (ctx, name) => scheduler.deleteJob(ctx.db, name)),
    pauseJob: byName('Suspends automatic firing (status PAUSED, nextRunTime null).', (ctx, name) => scheduler.pauseJob(ctx.db, name)),
    resumeJob: byName('Restores automatic firing from the next occurrence after now.', (ctx, name) => scheduler.resumeJob(ctx.db, name)),
    runJob: t.prismaField({
      type: 'JobInstance',
      extensions: { scope: 'scheduler:write' },
      description: 'Starts a MANUAL instance now, also while the job is paused; returns it RUNNING.',
      args: { name: t.arg.string({ required: true, description: 'Job name.' }) },
      resolve: (_q, _r, args, ctx) => scheduler.runJob(ctx.db, ctx.jobExecutor, validate(jobName, args.name, 'name')),
    }),
  };
});

/**
 * Each change of an instance of the job, made by any gateway process, as the instance's row: one read per signal (an
 * event, or a resync after the LISTEN connection came back) of what changed since the read before, for every
 * subscriber of the job.
 */
function instanceChanges(ctx: GraphQLContext, name: string): AsyncIterableIterator<scheduler.JobInstance> {
  return liveChanges(ctx.bus, 'jobInstance', name, {
    at: (row) => row.updateTime.getTime(),
    makeReader: () => {
      // Compared with rows the database stamped: the database's clock, not this process's.
      let since = dbNow(ctx.db);
      let seenAtSince = new Set<string>();
      return async () => {
        const rows = await ctx.db.jobInstance.findMany({ where: { jobName: name, updateTime: { gte: since } }, orderBy: [{ updateTime: 'asc' }, { id: 'asc' }] });
        const changed: scheduler.JobInstance[] = [];
        for (const row of rows) {
          const key = `${row.id}:${row.status}`;
          if (row.updateTime.getTime() === since.getTime() && seenAtSince.has(key)) continue;
          if (row.updateTime.getTime() > since.getTime()) {
            since = row.updateTime;
            seenAtSince = new Set();
          }
          seenAtSince.add(key);
          changed.push(row);
        }
        return changed;
      };
    },
  });
}

builder.subscriptionFields((t) => ({
  jobInstanceChanged: t.prismaField({
    type: 'JobInstance',
    extensions: { scope: 'scheduler:read' },
    nullable: true,
    description: 'Each instance of the job as it was when it started and when it settled, made by any gateway process (never null: nullable for older clients).',
    args: { jobName: t.arg.string({ required: true, description: 'Job name.' }) },
    subscribe: (_root, args, ctx) => instanceChanges(ctx, validate(jobName, args.jobName, 'jobName')),
    resolve: (_query, row) => row as unknown as scheduler.JobInstance,
  }),
}));
