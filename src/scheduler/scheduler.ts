import type { PrismaClient, Job, JobInstance, Prisma } from '../generated/prisma/client.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { dbNow } from '../db/clock.js';
import { translateWriteErrors } from '../db/errors.js';
import { likeLiteral } from '../db/like.js';
import { notifyEvent } from '../db/sql/notifyEvent.js';
import { LEASE_MARGIN_SECONDS } from '../db/sql/fireOccurrences.js';
import { readPage, type Page, type Window } from '../pagination.js';
import { nextOccurrence } from './cron.js';
import type { JobExecutor, RunnableInstance } from './executor.js';
import {
  toStoredTarget,
  type JobCreateInput,
  type JobFilter,
  type JobInstanceFilter,
  type JobInstanceOrder,
  type JobOrder,
  type JobUpdateInput,
  type RetryConfigInput,
  type StoredTarget,
} from './scheduler-rules.js';
import type { OutboundPolicy } from '../http/outbound-policy.js';

// The job scheduler over Prisma. Inputs are already validated by the edge (scheduler-rules.ts).

export type { Job, JobInstance };

const JOB_ORDER: Record<JobOrder, Prisma.JobOrderByWithRelationInput[]> = {
  NAME_ASC: [{ name: 'asc' }],
  NAME_DESC: [{ name: 'desc' }],
  NEXT_RUN_TIME_ASC: [{ nextRunTime: { sort: 'asc', nulls: 'last' } }, { name: 'asc' }],
  CREATE_TIME_DESC: [{ createTime: 'desc' }, { name: 'asc' }],
};
const INSTANCE_ORDER: Record<JobInstanceOrder, Prisma.JobInstanceOrderByWithRelationInput[]> = {
  SCHEDULED_TIME_DESC: [{ scheduledTime: 'desc' }, { id: 'asc' }],
  SCHEDULED_TIME_ASC: [{ scheduledTime: 'asc' }, { id: 'asc' }],
};

/** The first occurrence after `after`; a schedule that never fires again is refused at the edge of a write. */
function firstOccurrence(schedule: string, timeZone: string, after: Date): Date {
  const next = nextOccurrence(schedule, timeZone, after);
  if (!next) throw new ValidationError([{ field: 'schedule', message: `"${schedule}" has no occurrence after ${after.toISOString()} in ${timeZone}` }]);
  return next;
}

function retryColumns(retry: RetryConfigInput | undefined) {
  if (!retry) return {};
  return {
    ...(retry.retryCount !== undefined && { retryCount: retry.retryCount }),
    ...(retry.minBackoffSeconds !== undefined && { minBackoffMs: Math.round(retry.minBackoffSeconds * 1000) }),
    ...(retry.maxBackoffSeconds !== undefined && { maxBackoffMs: Math.round(retry.maxBackoffSeconds * 1000) }),
    ...(retry.maxDoublings !== undefined && { maxDoublings: retry.maxDoublings }),
  };
}

async function assertQueueExists(db: Prisma.TransactionClient, target: StoredTarget): Promise<void> {
  if (target.kind !== 'TASK') return;
  const queue = await db.queue.findUnique({ where: { name: target.queue }, select: { name: true } });
  if (!queue) throw new NotFoundError(`queue "${target.queue}" not found (target.task.queue)`);
}

export async function getJob(db: PrismaClient, name: string): Promise<Job> {
  const job = await db.job.findUnique({ where: { name } });
  if (!job) throw new NotFoundError(`job "${name}" not found`);
  return job;
}

export async function findJobs(db: PrismaClient, filter: JobFilter, order: JobOrder, window: Window): Promise<Page<Job>> {
  const where: Prisma.JobWhereInput = {
    ...(filter.namePrefix !== undefined && { name: { startsWith: likeLiteral(filter.namePrefix) } }),
    ...(filter.status !== undefined && { status: filter.status }),
    ...(filter.targetKind !== undefined && { target: { path: ['kind'], equals: filter.targetKind } }),
    ...(filter.queue !== undefined && { AND: [{ target: { path: ['kind'], equals: 'TASK' } }, { target: { path: ['queue'], equals: filter.queue } }] }),
  };
  return readPage(
    window,
    (skip, take) => db.job.findMany({ where, orderBy: JOB_ORDER[order], skip, take }),
    () => db.job.count({ where }),
  );
}

export async function findJobInstances(db: PrismaClient, filter: JobInstanceFilter, order: JobInstanceOrder, window: Window): Promise<Page<JobInstance>> {
  const where: Prisma.JobInstanceWhereInput = {
    ...(filter.jobName !== undefined && { jobName: filter.jobName }),
    ...(filter.status !== undefined && { status: filter.status }),
    ...(filter.trigger !== undefined && { trigger: filter.trigger }),
    ...((filter.from !== undefined || filter.to !== undefined) && {
      scheduledTime: { ...(filter.from !== undefined && { gte: filter.from }), ...(filter.to !== undefined && { lt: filter.to }) },
    }),
  };
  return readPage(
    window,
    (skip, take) => db.jobInstance.findMany({ where, orderBy: INSTANCE_ORDER[order], skip, take }),
    () => db.jobInstance.count({ where }),
  );
}

export async function getJobInstance(db: PrismaClient, id: string): Promise<JobInstance> {
  const instance = await db.jobInstance.findUnique({ where: { id } });
  if (!instance) throw new NotFoundError(`job instance "${id}" not found`);
  return instance;
}

/** Writes one job change and announces it (topic job, which also wakes the schedulers) in the same transaction. */
function changeJob(db: PrismaClient, name: string, run: (tx: Prisma.TransactionClient) => Promise<Job>): Promise<Job> {
  return translateWriteErrors(`job "${name}"`, () =>
    db.$transaction(async (tx) => {
      const job = await run(tx);
      await notifyEvent(tx, 'job', job.name);
      return job;
    }),
  );
}

/** A job's target URLs (an HTTP target's, or the template's of a task target) must be ones the gateway may call. */
function assertTargetAllowed(target: StoredTarget, outbound: OutboundPolicy): void {
  if (target.kind === 'HTTP') outbound.assertAllowed(target.url, 'target.http.url');
  const templateUrl = target.kind === 'TASK' ? (target.template.target as { url?: unknown } | undefined)?.url : undefined;
  if (typeof templateUrl === 'string') outbound.assertAllowed(templateUrl, 'target.task.template.target.url');
}

export function createJob(db: PrismaClient, input: JobCreateInput, outbound: OutboundPolicy, now = dbNow(db)): Promise<Job> {
  const timeZone = input.timeZone ?? 'UTC';
  const status = input.status ?? 'ENABLED';
  const target = toStoredTarget(input.target);
  assertTargetAllowed(target, outbound);
  const next = firstOccurrence(input.schedule, timeZone, now);
  return changeJob(db, input.name, async (tx) => {
    await assertQueueExists(tx, target);
    return tx.job.create({
      data: {
        name: input.name,
        description: input.description ?? '',
        schedule: input.schedule.trim(),
        timeZone,
        target: target as unknown as Prisma.InputJsonObject,
        status,
        ...(input.misfirePolicy !== undefined && { misfirePolicy: input.misfirePolicy }),
        ...(input.timeoutSeconds !== undefined && { timeoutSeconds: input.timeoutSeconds }),
        ...retryColumns(input.retryConfig),
        nextRunTime: status === 'ENABLED' ? next : null,
      },
    });
  });
}

/** Changes a job; a new schedule or time zone recomputes nextRunTime from now (while ENABLED). */
export function updateJob(db: PrismaClient, name: string, input: JobUpdateInput, outbound: OutboundPolicy, now = dbNow(db)): Promise<Job> {
  const target = input.target ? toStoredTarget(input.target) : undefined;
  if (target) assertTargetAllowed(target, outbound);
  return changeJob(db, name, async (tx) => {
    const job = await tx.job.findUnique({ where: { name } });
    if (!job) throw new NotFoundError(`job "${name}" not found`);
    const schedule = input.schedule?.trim() ?? job.schedule;
    const timeZone = input.timeZone ?? job.timeZone;
    const retimed = schedule !== job.schedule || timeZone !== job.timeZone;
    const next = retimed ? firstOccurrence(schedule, timeZone, now) : undefined;
    if (target) await assertQueueExists(tx, target);
    return tx.job.update({
      where: { name },
      data: {
        ...(input.description !== undefined && { description: input.description }),
        ...(input.misfirePolicy !== undefined && { misfirePolicy: input.misfirePolicy }),
        ...(input.timeoutSeconds !== undefined && { timeoutSeconds: input.timeoutSeconds }),
        ...retryColumns(input.retryConfig),
        ...(target && { target: target as unknown as Prisma.InputJsonObject }),
        schedule,
        timeZone,
        ...(next && job.status === 'ENABLED' && { nextRunTime: next }),
        updateTime: now,
      },
    });
  });
}

/** Stops automatic firing; nextRunTime becomes null. Pausing a paused job changes nothing. */
export function pauseJob(db: PrismaClient, name: string, now = dbNow(db)): Promise<Job> {
  return changeJob(db, name, async (tx) => {
    const job = await tx.job.findUnique({ where: { name } });
    if (!job) throw new NotFoundError(`job "${name}" not found`);
    if (job.status === 'PAUSED') return job;
    return tx.job.update({ where: { name }, data: { status: 'PAUSED', nextRunTime: null, updateTime: now } });
  });
}

/** Restores automatic firing from the next occurrence after now (occurrences missed while paused are not fired). */
export function resumeJob(db: PrismaClient, name: string, now = dbNow(db)): Promise<Job> {
  return changeJob(db, name, async (tx) => {
    const job = await tx.job.findUnique({ where: { name } });
    if (!job) throw new NotFoundError(`job "${name}" not found`);
    if (job.status === 'ENABLED') return job;
    const next = nextOccurrence(job.schedule, job.timeZone, now);
    return tx.job.update({ where: { name }, data: { status: 'ENABLED', nextRunTime: next, updateTime: now } });
  });
}

/** Deletes a job with its instances; answers the deleted job. */
export function deleteJob(db: PrismaClient, name: string): Promise<Job> {
  return changeJob(db, name, async (tx) => {
    const job = await tx.job.findUnique({ where: { name } });
    if (!job) throw new NotFoundError(`job "${name}" not found`);
    await tx.job.delete({ where: { name } });
    return job;
  });
}

export function runnableOf(job: Job, instance: { id: string; scheduledTime: Date }): RunnableInstance {
  return {
    id: instance.id,
    jobName: job.name,
    scheduledTime: instance.scheduledTime,
    target: job.target as unknown as StoredTarget,
    retryCount: job.retryCount,
    minBackoffMs: job.minBackoffMs,
    maxBackoffMs: job.maxBackoffMs,
    maxDoublings: job.maxDoublings,
    timeoutSeconds: job.timeoutSeconds,
  };
}

/** The longest an instance of the job can take, plus a margin; the same bound fireOccurrences computes in SQL. */
export function leaseMs(job: Pick<Job, 'timeoutSeconds' | 'retryCount' | 'maxBackoffMs'>): number {
  return (job.timeoutSeconds * (job.retryCount + 1) + LEASE_MARGIN_SECONDS) * 1000 + job.maxBackoffMs * job.retryCount;
}

/** Starts a MANUAL instance now, whatever the job's status (also while paused); answers it RUNNING. */
export async function runJob(db: PrismaClient, executor: JobExecutor, name: string, now = dbNow(db)): Promise<JobInstance> {
  const [job, instance] = await db.$transaction(async (tx) => {
    const found = await tx.job.findUnique({ where: { name } });
    if (!found) throw new NotFoundError(`job "${name}" not found`);
    const created = await tx.jobInstance.create({
      data: {
        jobName: name,
        trigger: 'MANUAL',
        status: 'RUNNING',
        scheduledTime: now,
        startTime: now,
        updateTime: now,
        lockedBy: executor.id,
        lockedUntil: new Date(now.getTime() + leaseMs(found)),
      },
    });
    await tx.job.update({ where: { name }, data: { lastRunTime: now } });
    await notifyEvent(tx, 'jobInstance', name);
    return [found, created] as const;
  });
  executor.start(runnableOf(job, instance));
  return instance;
}
