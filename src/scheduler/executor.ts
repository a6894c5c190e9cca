import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../log.js';
import { settleJobInstances, type Settlement } from '../db/sql/settleJobInstances.js';
import type { StoredTarget } from './scheduler-rules.js';
import { attemptHttp, attemptTask, type AttemptOutcome, type TaskCreator } from './targets.js';
import { createSettleRetry, settleUntilLanded } from '../kit/settle-retry.js';
import type { BackoffPolicy } from '../kit/backoff.js';
import type { LoopRegistry } from '../kit/supervised-loop.js';
import type { OutboundPolicy } from '../http/outbound-policy.js';
import { untilDeadline } from '../kit/deadline.js';
import { dbNow } from '../db/clock.js';

// Runs fired instances in this process: performs the target with the job's retry policy, then settles the
// instance SUCCEEDED or FAILED. Settlements are written in batches (one statement per flush), so 1,000 firings a
// second cost a handful of statements, not 1,000; a flush that fails is retried until it lands (the target was
// already called: losing the outcome would have the reaper fail an instance that succeeded).

export interface RunnableInstance {
  id: string;
  jobName: string;
  scheduledTime: Date;
  target: StoredTarget;
  retryCount: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  maxDoublings: number;
  timeoutSeconds: number;
}

export interface JobExecutor {
  /** The lease owner written into instances this process runs. */
  readonly id: string;
  start(instance: RunnableInstance): void;
  /** Binds the tasks area (the integrator does this); until then task targets fail. */
  bindTaskCreator(creator: TaskCreator | null): void;
  /** Interrupts running targets, settles them, flushes (retrying until `deadline`, epoch ms). */
  stop(deadline: number): Promise<void>;
}

const FLUSH_MS = 50;

/** Cloud Scheduler's backoff: doubles from min `maxDoublings` times, then grows linearly, capped at max. */
export function backoffMs(retry: number, minMs: number, maxMs: number, maxDoublings: number): number {
  const doublings = Math.min(retry - 1, maxDoublings);
  const linear = Math.max(0, retry - 1 - maxDoublings);
  const atCap = minMs * 2 ** doublings;
  return Math.min(maxMs, atCap + linear * atCap);
}

export function createJobExecutor(db: PrismaClient, log: Logger, deps: { loops: LoopRegistry; backoff: BackoffPolicy; outbound: OutboundPolicy }): JobExecutor {
  const id = `gw-${process.pid}-${randomUUID().slice(0, 8)}`;
  const stopping = new AbortController();
  const retry = createSettleRetry({ loops: deps.loops, backoff: deps.backoff, log });
  const running = new Set<Promise<void>>();
  let pending: Settlement[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let taskCreator: TaskCreator | null = null;

  const flush = (): Promise<void> => {
    flushTimer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return flushing;
    flushing = flushing.then(async () => {
      try {
        const settled = new Set(await settleUntilLanded(`settle ${batch.length} job instance(s)`, () => settleJobInstances(db, id, batch), retry));
        const lost = batch.filter((s) => !settled.has(s.id));
        if (lost.length) log.warn({ instances: lost.map((s) => s.id) }, 'job instances were no longer leased to this process; outcome dropped');
      } catch (error) {
        log.error({ err: error, count: batch.length }, 'settling job instances gave up at shutdown; the reaper fails them after their lease');
      }
    });
    return flushing;
  };

  const settle = (s: Settlement) => {
    pending.push(s);
    flushTimer ??= setTimeout(() => void flush(), FLUSH_MS);
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        stopping.signal.removeEventListener('abort', done);
        resolve();
      }
      stopping.signal.addEventListener('abort', done, { once: true });
    });

  async function perform(instance: RunnableInstance): Promise<void> {
    let outcome: AttemptOutcome = { ok: false, error: 'not attempted', retryable: false };
    let attempt = 0;
    while (attempt <= instance.retryCount && !stopping.signal.aborted) {
      attempt += 1;
      if (attempt > 1) await sleep(backoffMs(attempt - 1, instance.minBackoffMs, instance.maxBackoffMs, instance.maxDoublings));
      if (stopping.signal.aborted) {
        outcome = { ok: false, error: `interrupted: the gateway process shut down after ${attempt - 1} attempt(s); last error: ${outcome.error}`, retryable: false };
        attempt -= 1;
        break;
      }
      const ctx = { jobName: instance.jobName, instanceId: instance.id, scheduledTime: instance.scheduledTime, attempt };
      outcome =
        instance.target.kind === 'HTTP'
          ? await attemptHttp(instance.target, ctx, instance.timeoutSeconds * 1000, stopping.signal, deps.outbound)
          : await attemptTask(instance.target, ctx, taskCreator, stopping.signal);
      if (outcome.ok || !outcome.retryable) break;
    }
    settle({
      id: instance.id,
      status: outcome.ok ? 'SUCCEEDED' : 'FAILED',
      finishTime: dbNow(db).toISOString(),
      attempts: attempt,
      result: outcome.result === undefined ? null : JSON.stringify(outcome.result),
      error: outcome.ok ? null : (outcome.error ?? 'failed'),
    });
  }

  return {
    id,
    start(instance) {
      const run = perform(instance)
        .catch((error: unknown) => log.error({ err: error, instance: instance.id }, 'job instance crashed'))
        .finally(() => running.delete(run));
      running.add(run);
    },
    bindTaskCreator(creator) {
      taskCreator = creator;
    },
    async stop(deadline) {
      stopping.abort();
      const cancelGiveUp = retry.giveUpAt(deadline);
      // A task target may wait on the database (its task's status); a database that does not answer must not hold the
      // process past its shutdown deadline: what is not settled by then is reaped after its lease.
      await untilDeadline(Promise.allSettled([...running]), deadline - Date.now());
      if (flushTimer) clearTimeout(flushTimer);
      await untilDeadline(flush(), deadline - Date.now());
      cancelGiveUp();
    },
  };
}
