import http from 'node:http';
import https from 'node:https';
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
 * the task has finished. The integrator binds this to the tasks area (see docs/notes/scheduler.md); while it is
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

// Keep-alive agents with a bounded pool per origin: 1,000 firings a second reuse sockets instead of opening them.
// node:http is used rather than fetch because it costs far less CPU per request, which is what bounds lateness.
const AGENT_OPTIONS = { keepAlive: true, maxSockets: 256, maxFreeSockets: 256, scheduling: 'lifo' as const };
const httpAgent = new http.Agent(AGENT_OPTIONS);
const httpsAgent = new https.Agent(AGENT_OPTIONS);

function request(target: Extract<StoredTarget, { kind: 'HTTP' }>, headers: Record<string, string>, signal: AbortSignal): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(target.url);
    const secure = url.protocol === 'https:';
    // A method that carries a body always states its length (0 when the job has none): no chunked encoding, and
    // headers and body leave in one write.
    const bodyless = target.httpMethod === 'GET' || target.httpMethod === 'HEAD';
    const usuallyBody = target.httpMethod === 'POST' || target.httpMethod === 'PUT' || target.httpMethod === 'PATCH';
    const body = bodyless ? null : usuallyBody || target.body !== null ? Buffer.from(target.body ?? '') : null;
    const req = (secure ? https : http).request(
      url,
      {
        method: target.httpMethod,
        agent: secure ? httpsAgent : httpAgent,
        headers: { ...headers, ...(body && { 'content-length': String(body.length) }) },
        signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < BODY_PREVIEW) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, BODY_PREVIEW) }));
        res.on('error', reject);
        res.on('close', () => {
          if (!res.complete) reject(new Error('the connection closed before the response ended'));
        });
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

export async function attemptHttp(target: Extract<StoredTarget, { kind: 'HTTP' }>, ctx: FiringContext, timeoutMs: number, signal: AbortSignal): Promise<AttemptOutcome> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) headers[name.toLowerCase()] = value;
  headers['x-scheduler-job-name'] = ctx.jobName;
  headers['x-scheduler-instance-id'] = ctx.instanceId;
  headers['x-scheduler-schedule-time'] = ctx.scheduledTime.toISOString();
  headers['x-scheduler-attempt'] = String(ctx.attempt);
  headers['user-agent'] ??= 'public-services-gateway-scheduler';
  // One timer and one listener per attempt, both released when it ends: AbortSignal.timeout/any would keep a
  // 180 s timer and a dependent signal alive per firing, which at 1,000 firings a second starves the process.
  const attempt = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attempt.abort();
  }, timeoutMs);
  const onStop = () => attempt.abort();
  signal.addEventListener('abort', onStop, { once: true });
  try {
    const res = await request(target, headers, attempt.signal);
    const result = { httpStatus: res.status, body: res.body };
    if (res.status >= 200 && res.status < 300) return { ok: true, result, retryable: false };
    return { ok: false, result, error: `HTTP ${res.status} from ${target.url}`, retryable: true };
  } catch (error) {
    if (timedOut) return { ok: false, error: `no answer from ${target.url} within ${timeoutMs / 1000} s`, retryable: true };
    if (signal.aborted) return { ok: false, error: 'interrupted: the gateway process shut down', retryable: false };
    return { ok: false, error: `request to ${target.url} failed: ${(error as Error).message}`, retryable: true };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onStop);
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
