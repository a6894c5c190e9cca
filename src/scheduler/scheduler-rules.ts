import { z } from 'zod';
import { queueName } from '../queues/queue-rules.js';
import { cronProblem, timeZoneProblem } from './cron.js';

// Every rule about what a job may hold; the GraphQL and JSON-RPC edges both validate with these schemas.
// Defaults follow Google Cloud Scheduler (HTTP method POST, attempt deadline 180 s, retry backoff 5 s .. 1 h,
// 5 doublings) and Quartz (misfire: fire once now).

export const JOB_STATUS = { ENABLED: 'ENABLED', PAUSED: 'PAUSED' } as const;
export type JobStatusName = keyof typeof JOB_STATUS;
export const JOB_INSTANCE_STATUS = { RUNNING: 'RUNNING', SUCCEEDED: 'SUCCEEDED', FAILED: 'FAILED', SKIPPED: 'SKIPPED' } as const;
export type JobInstanceStatusName = keyof typeof JOB_INSTANCE_STATUS;
export const JOB_TRIGGER = { SCHEDULE: 'SCHEDULE', MANUAL: 'MANUAL' } as const;
export const MISFIRE_POLICY = { FIRE_ONCE: 'FIRE_ONCE', SKIP: 'SKIP' } as const;
export const MISFIRE = { FIRED_LATE: 'FIRED_LATE', SKIPPED: 'SKIPPED' } as const;
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

export const jobName = z
  .string({ message: 'must be a string' })
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must be 1-128 characters of letters, digits, "_", "-" or "."');
const description = z.string({ message: 'must be a string' }).max(1024, 'at most 1024 characters');
export const cronSchedule = z
  .string({ message: 'must be a string' })
  .max(256, 'at most 256 characters')
  .superRefine((value, ctx) => {
    const problem = cronProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
export const timeZone = z
  .string({ message: 'must be a string' })
  .max(64, 'at most 64 characters')
  .superRefine((value, ctx) => {
    const problem = timeZoneProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const httpTarget = z.strictObject({
  url: z
    .string({ message: 'must be a string' })
    .max(2048, 'at most 2048 characters')
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'must be an absolute http:// or https:// URL'),
  httpMethod: z.enum(HTTP_METHODS, { message: `must be one of ${HTTP_METHODS.join(', ')}` }).optional(),
  headers: z.record(z.string(), z.string({ message: 'must be a string' }), { message: 'must be an object of strings' }).optional(),
  body: z.string({ message: 'must be a string' }).max(102_400, 'at most 100 KiB').optional(),
});
const taskTarget = z.strictObject({
  queue: queueName,
  template: z.record(z.string(), z.unknown(), { message: 'must be an object' }).optional(),
});
export const jobTarget = z
  .strictObject({ http: httpTarget.optional(), task: taskTarget.optional() }, { message: 'must be an object' })
  .refine((t) => (t.http === undefined) !== (t.task === undefined), 'give exactly one of `http` or `task`');

const seconds = (max: number) => z.number({ message: 'must be a number' }).min(0, 'must be at least 0').max(max, `must be at most ${max}`);
export const retryConfig = z.strictObject({
  retryCount: z.number({ message: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').max(5, 'must be at most 5').optional(),
  minBackoffSeconds: seconds(3600).optional(),
  maxBackoffSeconds: seconds(3600).optional(),
  maxDoublings: z.number({ message: 'must be an integer' }).int('must be an integer').min(0).max(16, 'must be at most 16').optional(),
});
const timeoutSeconds = z.number({ message: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(1800, 'must be at most 1800');
const misfirePolicy = z.enum(['FIRE_ONCE', 'SKIP'], { message: 'must be FIRE_ONCE or SKIP' });

export const jobRules = {
  create: z.strictObject({
    name: jobName,
    description: description.optional(),
    schedule: cronSchedule,
    timeZone: timeZone.optional(),
    target: jobTarget,
    status: z.enum(['ENABLED', 'PAUSED'], { message: 'must be ENABLED or PAUSED' }).optional(),
    retryConfig: retryConfig.optional(),
    timeoutSeconds: timeoutSeconds.optional(),
    misfirePolicy: misfirePolicy.optional(),
  }),
  update: z.strictObject({
    description: description.optional(),
    schedule: cronSchedule.optional(),
    timeZone: timeZone.optional(),
    target: jobTarget.optional(),
    retryConfig: retryConfig.optional(),
    timeoutSeconds: timeoutSeconds.optional(),
    misfirePolicy: misfirePolicy.optional(),
  }),
};

export const jobFilter = z.strictObject({
  namePrefix: z.string({ message: 'must be a string' }).max(128).optional(),
  status: z.enum(['ENABLED', 'PAUSED'], { message: 'must be ENABLED or PAUSED' }).optional(),
  targetKind: z.enum(['HTTP', 'TASK'], { message: 'must be HTTP or TASK' }).optional(),
  queue: queueName.optional(),
});

const instant = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with offset, e.g. 2026-01-31T12:00:00Z' });
export const jobInstanceFilter = z.strictObject({
  jobName: jobName.optional(),
  status: z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'SKIPPED'], { message: 'must be RUNNING, SUCCEEDED, FAILED or SKIPPED' }).optional(),
  trigger: z.enum(['SCHEDULE', 'MANUAL'], { message: 'must be SCHEDULE or MANUAL' }).optional(),
  /** scheduledTime at or after this instant. */
  from: z.union([instant, z.date()]).transform((v) => new Date(v)).optional(),
  /** scheduledTime before this instant. */
  to: z.union([instant, z.date()]).transform((v) => new Date(v)).optional(),
});

/** What a job does when it fires, as stored in Job.target. */
export type StoredTarget =
  | { kind: 'HTTP'; url: string; httpMethod: (typeof HTTP_METHODS)[number]; headers: Record<string, string>; body: string | null }
  | { kind: 'TASK'; queue: string; template: Record<string, unknown> };

export type JobTargetInput = z.output<typeof jobTarget>;
export type RetryConfigInput = z.output<typeof retryConfig>;
export type JobCreateInput = z.output<(typeof jobRules)['create']>;
export type JobUpdateInput = z.output<(typeof jobRules)['update']>;
export type JobFilter = z.output<typeof jobFilter>;
export type JobInstanceFilter = z.output<typeof jobInstanceFilter>;
export type JobOrder = 'NAME_ASC' | 'NAME_DESC' | 'NEXT_RUN_TIME_ASC' | 'CREATE_TIME_DESC';
export type JobInstanceOrder = 'SCHEDULED_TIME_DESC' | 'SCHEDULED_TIME_ASC';

export function toStoredTarget(target: JobTargetInput): StoredTarget {
  if (target.http) {
    return { kind: 'HTTP', url: target.http.url, httpMethod: target.http.httpMethod ?? 'POST', headers: target.http.headers ?? {}, body: target.http.body ?? null };
  }
  return { kind: 'TASK', queue: target.task!.queue, template: target.task!.template ?? {} };
}
