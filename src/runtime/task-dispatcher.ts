import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { claimTasks, type ClaimedTask } from '../db/sql/claimTasks.js';
import { dispatchRound } from '../db/sql/dispatchRound.js';
import { settleTasks, type TaskSettlement } from '../db/sql/settleTask.js';
import { handBackTasks, renewTaskLeases } from '../db/sql/taskLeases.js';
import type { AppServices } from '../services.js';
import type { Logger } from '../log.js';
import { runTaskAttempt } from '../tasks/run-task.js';
import type { Worker } from './types.js';
import { faultBackoff } from './backoff.js';
import { startLeaseRenewal } from './lease-renewal.js';
import { superviseLoop } from './supervised-loop.js';
import { createSettleRetry, settleUntilLanded } from './settle-retry.js';
import { untilDeadline } from './deadline.js';

// The task dispatcher of one process, on a supervised loop: unblock due tasks and find queues with runnable tasks
// (one statement) -> claim within each queue's free rate slots (src/db/sql/claimTasks.ts) -> run each claimed task
// without waiting -> settle while still holding its lease (attempts that end while a settle runs are settled together
// by the next one; a settle that fails is retried until it lands, the lease renewed meanwhile). It sleeps until a
// NOTIFY (a task or queue changed in any process), a local completion, or the next due instant wakes it; TASK_POLL_MS
// only bounds that sleep in case a wake-up is lost.

/** Kept for the hand-back statement when a shutdown deadline is near. */
const HAND_BACK_RESERVE_MS = 500;

export function createTaskDispatcher(services: AppServices, log: Logger): Worker {
  const { db, config, bus, loops } = services;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const logger = log.child({ worker: 'task-dispatcher', workerId });
  const backoff = faultBackoff(config);
  /** Attempts running or waiting to settle: their leases are renewed until they settle. */
  const inflight = new Map<string, Promise<void>>();
  /** Claimed tasks whose attempt did not settle (interrupted, or the shutdown deadline came first); handed back on stop. */
  const unsettled = new Set<string>();
  const interrupt = new AbortController();
  const unsubscribers: (() => void)[] = [];
  const toSettle: { id: string; settlement: TaskSettlement; done: (kept: boolean) => void; failed: (error: unknown) => void }[] = [];
  let settling: Promise<void> | undefined;
  const retry = createSettleRetry({ backoff, loops, log: logger });

  async function flushSettlements(): Promise<void> {
    while (toSettle.length) {
      const batch = toSettle.splice(0, 500);
      try {
        const kept = await settleUntilLanded(`settle ${batch.length} task attempt(s)`, () => settleTasks(db, workerId, batch), retry);
        for (const item of batch) item.done(kept.has(item.id));
      } catch (error) {
        for (const item of batch) item.failed(error);
      }
    }
    settling = undefined;
  }

  function settle(id: string, settlement: TaskSettlement): Promise<boolean> {
    return new Promise((done, failed) => {
      toSettle.push({ id, settlement, done, failed });
      settling ??= flushSettlements();
    });
  }

  async function runClaimed(task: ClaimedTask): Promise<void> {
    unsettled.add(task.id);
    try {
      const settlement = await runTaskAttempt(task, interrupt.signal, services.outbound);
      if (!settlement) return;
      const kept = await settle(task.id, settlement);
      unsettled.delete(task.id);
      if (!kept) logger.warn({ task: `${task.queueName}/${task.name}` }, 'lease lost before settling; the task was reclaimed elsewhere');
      else if (settlement.action !== 'succeed') logger.info({ task: `${task.queueName}/${task.name}`, attempt: task.attempts, error: settlement.lastError }, `task attempt failed (${settlement.action})`);
    } catch (error) {
      logger.error({ err: error, task: `${task.queueName}/${task.name}` }, 'settling a task gave up at shutdown; its lease expires and it runs again');
    }
  }

  const dispatch = loops.add(
    superviseLoop({
      name: 'task-dispatcher',
      log: logger,
      backoff,
      /** One round; sleeps until something next becomes due (at most TASK_POLL_MS). */
      async round(stopping) {
        const { queues, nextDueAt, unblocked } = await dispatchRound(db);
        for (const queue of queues) {
          const free = config.TASK_CONCURRENCY - inflight.size;
          if (free <= 0 || stopping.aborted) break;
          const claimed = await claimTasks(db, queue, workerId, free, config.TASK_LEASE_SECONDS);
          for (const task of claimed) {
            if (task.status === 'RUNNING') start(task);
            else logger.warn({ task: `${task.queueName}/${task.name}`, attempts: task.attempts }, 'task FAILED: the lease of its last attempt expired');
          }
        }
        if (unblocked > 0) return 0; // runnable from the next round on
        const untilDue = nextDueAt ? nextDueAt.getTime() - Date.now() + 5 : Infinity;
        return Math.max(0, Math.min(config.TASK_POLL_MS, untilDue));
      },
    }),
  );

  function start(task: ClaimedTask): void {
    const run = runClaimed(task).finally(() => {
      inflight.delete(task.id);
      dispatch.nudge();
    });
    inflight.set(task.id, run);
  }

  const renewal = startLeaseRenewal({
    leaseSeconds: config.TASK_LEASE_SECONDS,
    held: () => [...inflight.keys()],
    renew: (ids) => renewTaskLeases(db, ids, workerId, config.TASK_LEASE_SECONDS),
    logger,
    what: 'task',
    loops,
    backoff,
  });

  return {
    name: 'task-dispatcher',
    start() {
      unsubscribers.push(bus.onTopic('queueTasks', dispatch.nudge), bus.onTopic('queue', dispatch.nudge));
      dispatch.start();
      renewal.start();
    },
    async stop(deadline) {
      for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
      await dispatch.stop();
      // Running attempts may finish within TASK_STOP_WAIT_MS (and before the deadline); the rest are interrupted.
      const waitMs = Math.min(config.TASK_STOP_WAIT_MS, deadline - HAND_BACK_RESERVE_MS - Date.now());
      if (!(await untilDeadline(Promise.all(inflight.values()), waitMs))) interrupt.abort();
      // Settles still retrying give up when only the hand-back's time is left.
      const cancelGiveUp = retry.giveUpAt(deadline - HAND_BACK_RESERVE_MS);
      await Promise.all(inflight.values());
      cancelGiveUp();
      await renewal.stop();
      const handed = await handBackTasks(db, [...unsettled], workerId).catch((error: unknown) => {
        logger.error({ err: error }, 'handing tasks back failed; their leases expire and they run again');
        return 0;
      });
      if (handed) logger.info({ handed }, 'running tasks handed back for another process');
    },
    nudge: dispatch.nudge,
  };
}
