import { sendOutbound } from '../http/outbound.js';
import type { OutboundPolicy } from '../http/outbound-policy.js';
import type { StoredTarget } from './scheduler-rules.js';

// What a firing does: an HTTP request, or a task created in a queue. Each attempt answers an outcome instead of
// throwing; the executor owns retries (STYLE rule 10).

export interface AttemptOutcome {
  ok: boolean;
  /** What the target answered (HTTP status and the start of the body, or the created task). */
  result?: unknown;
  error?: string;
  /** False when trying again cannot help (a missing TaskCreator, an invalid template). */
  retryable: boolean;
}

/** Which firing an attempt belongs to; HTTP targets receive these as headers. */
export interface FiringContext {
  jobName: string;
  instanceId: string;
  scheduledTime: Date;
  attempt: number;
}

/**
 * The tasks area, as the scheduler sees it: creates one task in `queue` from the job's template and resolves when
 * the task has finished. src/gateway/services.ts binds this to the tasks area; while it is
 * unbound, task targets fail with a clear error.
 */
export interface TaskCreator {
  createTask(input: {
    queue: string;
    template: Record<string, unknown>;
    jobName: string;
    instanceId: string;
    signal: AbortSignal;
  }): Promise<{ taskId: string; succeeded: boolean; detail?: unknown }>;
}

const BODY_PREVIEW = 4096;

export async function attemptHttp(target: Extract<StoredTarget, { kind: 'HTTP' }>, ctx: FiringContext, timeoutMs: number, signal: AbortSignal, policy: OutboundPolicy): Promise<AttemptOutcome> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value;
  headers['x-scheduler-job-name'] = ctx.jobName;
  headers['x-scheduler-instance-id'] = ctx.instanceId;
  headers['x-scheduler-schedule-time'] = ctx.scheduledTime.toISOString();
  headers['x-scheduler-attempt'] = String(ctx.attempt);
  headers['user-agent'] ??= 'public-services-gateway-scheduler';
  const outcome = await sendOutbound({ url: target.url, method: target.httpMethod, headers, body: target.body }, { timeoutMs, signal, bodyLimit: BODY_PREVIEW, policy });
  switch (outcome.kind) {
    case 'answered': {
      const result = { httpStatus: outcome.status, body: outcome.body };
      if (outcome.status >= 200 && outcome.status < 300) return { ok: true, result, retryable: false };
      return { ok: false, result, error: `HTTP ${outcome.status} from ${target.url}`, retryable: true };
    }
    case 'aborted':
    case 'refused':
      return { ok: false, error: outcome.message, retryable: false };
    default:
      return { ok: false, error: outcome.message, retryable: true };
  }
}

export async function attemptTask(
  target: Extract<StoredTarget, { kind: 'TASK' }>,
  ctx: FiringContext,
  taskCreator: TaskCreator | null,
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  if (!taskCreator) {
    return { ok: false, error: `cannot create a task in queue "${target.queue}": no task creator is bound to the scheduler in this gateway`, retryable: false };
  }
  try {
    const task = await taskCreator.createTask({ queue: target.queue, template: target.template, jobName: ctx.jobName, instanceId: ctx.instanceId, signal });
    const result = { taskId: task.taskId, ...(task.detail !== undefined && { detail: task.detail }) };
    return task.succeeded ? { ok: true, result, retryable: false } : { ok: false, result, error: `task ${task.taskId} in queue "${target.queue}" did not succeed`, retryable: true };
  } catch (error) {
    return { ok: false, error: `creating a task in queue "${target.queue}" failed: ${(error as Error).message}`, retryable: true };
  }
}
