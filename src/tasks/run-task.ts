import { sendOutbound } from '../http/outbound.js';
import type { OutboundPolicy } from '../http/outbound-policy.js';
import type { ClaimedTask } from '../db/sql/claimTasks.js';
import type { TaskSettlement } from '../db/sql/settleTask.js';
import { attemptTimeoutSeconds, backoffAfter, RESULT_BODY_LIMIT, type TaskTarget } from './task-rules.js';

// Running a task is its HTTP request (Cloud Tasks' HTTP tasks): 2xx succeeds; any other answer, a timeout or a
// connection error is retried with exponential backoff until maxAttempts are spent; an address the outbound policy
// refuses fails the task at once.

const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);

/** One attempt; `undefined` when the process is stopping and the attempt must be handed back instead. */
export async function runTaskAttempt(task: ClaimedTask, signal: AbortSignal, policy: OutboundPolicy, maxTimeoutSeconds: number): Promise<TaskSettlement | undefined> {
  const target = task.target as TaskTarget;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers ?? {})) headers[name.toLowerCase()] = value;
  headers['x-task-queue'] = task.queueName;
  headers['x-task-name'] = task.name;
  headers['x-task-id'] = task.id;
  headers['x-task-attempt'] = String(task.attempts);
  headers['user-agent'] ??= 'public-services-gateway-tasks';
  let body: string | null = target.body ?? null;
  if (body === null && task.payload !== null && task.payload !== undefined && !BODYLESS.has(target.method)) {
    body = JSON.stringify(task.payload);
    headers['content-type'] ??= 'application/json';
  }
  const outcome = await sendOutbound(
    { url: target.url, method: target.method, headers, body },
    { timeoutMs: attemptTimeoutSeconds(target, maxTimeoutSeconds) * 1000, signal, bodyLimit: RESULT_BODY_LIMIT, policy },
  );
  if (outcome.kind === 'aborted') return undefined;
  // A refused address stays refused: no retry can help.
  if (outcome.kind === 'refused') return { action: 'fail', lastError: outcome.message, result: null, delayMs: 0 };
  const result = outcome.kind === 'answered' ? { statusCode: outcome.status, body: outcome.body } : null;
  if (outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300) return { action: 'succeed', lastError: null, result, delayMs: 0 };
  const error = outcome.kind === 'answered' ? `HTTP ${outcome.status} from ${target.url}` : outcome.message;
  if (task.attempts >= task.maxAttempts) {
    return { action: 'fail', lastError: `gave up after ${task.attempts} attempt(s): ${error}`, result, delayMs: 0 };
  }
  return { action: 'retry', lastError: error, result, delayMs: backoffAfter(task.attempts, task.minBackoffMs, task.maxBackoffMs) };
}
