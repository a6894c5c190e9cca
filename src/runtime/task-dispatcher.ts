import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { claimTasks, type ClaimedTask } from '../db/sql/claimTasks.js';
import { dispatchRound } from '../db/sql/dispatchRound.js';
import { settleTasks, type TaskSettlement } from '../db/sql/settleTask.js';
import { handBackTasks, renewTaskLeases } from '../db/sql/taskLeases.js';
import type { AppServices } from '../graphql/context.js';
import type { Logger } from '../log.js';
import { runTaskAttempt } from '../tasks/run-task.js';
import type { Worker } from './types.js';
import { createWakeUp } from './wake-up.js';
import { startLeaseRenewal, type LeaseRenewal } from './lease-renewal.js';

// The task dispatcher of one process: unblock due tasks and find queues with runnable tasks (one statement) -> claim
// within each queue's free rate slots (src/db/sql/claimTasks.ts) -> run each claimed task without waiting -> settle
// while still holding its lease (attempts that end while a settle runs are settled together by the next one). It sleeps until a NOTIFY (a task or queue changed in any process), a local completion, or the
// next due instant wakes it; TASK_POLL_MS only bounds that sleep in case a wake-up is lost.

const MAX_FAILURES_IN_A_ROW = 30;

export function createTaskDispatcher(services: AppServices, log: Logger): Worker {
  const { db, config, bus } = services;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const logger = log.child({ worker: 'task-dispatcher', workerId });
  const inflight = new Map<string, Promise<void>>();
  /** Claimed tasks whose attempt did not settle (interrupted, or the database failed); handed back on stop. */
  const unsettled = new Set<string>();
  const interrupt = new AbortController();
  let stopping = false;
  let loop: Promise<void> | undefined;
  const wakeUp = createWakeUp();
  let renewal: LeaseRenewal | undefined;
  const unsubscribers: (() => void)[] = [];
  const toSettle: { id: string; settlement: TaskSettlement; done: (kept: boolean) => void; failed: (error: unknown) => void }[] = [];
  let settling: Promise<void> | undefined;

  async function flushSettlements(): Promise<void> {
    while (toSettle.length) {
      const batch = toSettle.splice(0, 500);
      try {
        const kept = await settleTasks(db, workerId, batch);
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

  const nudge = () => wakeUp.wake();
  const sleep = (ms: number) => (stopping ? Promise.resolve() : wakeUp.sleep(ms));

  async function runClaimed(task: ClaimedTask): Promise<void> {
    unsettled.add(task.id);
    try {
      const settlement = await runTaskAttempt(task, interrupt.signal);
      if (!settlement) return;
      const kept = await settle(task.id, settlement);
      unsettled.delete(task.id);
      if (!kept) logger.warn({ task: `${task.queueName}/${task.name}` }, 'lease lost before settling; the task was reclaimed elsewhere');
      else if (settlement.action !== 'succeed') logger.info({ task: `${task.queueName}/${task.name}`, attempt: task.attempts, error: settlement.lastError }, `task attempt failed (${settlement.action})`);
    } catch (error) {
      logger.error({ err: error, task: `${task.queueName}/${task.name}` }, 'settling a task failed; it is handed back on stop or reclaimed when its lease expires');
    }
  }

  function start(task: ClaimedTask): void {
    const run = runClaimed(task).finally(() => {
      inflight.delete(task.id);
      nudge();
    });
    inflight.set(task.id, run);
  }

  /** One round; answers when something next becomes due. */
  async function dispatchOnce(): Promise<Date | null> {
    const { queues, nextDueAt, unblocked } = await dispatchRound(db);
    if (unblocked > 0) nudge(); // runnable from the next round on
    for (const queue of queues) {
      const free = config.TASK_CONCURRENCY - inflight.size;
      if (free <= 0 || stopping) break;
      const claimed = await claimTasks(db, queue, workerId, free, config.TASK_LEASE_SECONDS);
      for (const task of claimed) {
        if (task.status === 'RUNNING') start(task);
        else logger.warn({ task: `${task.queueName}/${task.name}`, attempts: task.attempts }, 'task FAILED: the lease of its last attempt expired');
      }
    }
    return nextDueAt;
  }

  async function run(): Promise<void> {
    let failures = 0;
    while (!stopping) {
      wakeUp.reset();
      let nextDueAt: Date | null = null;
      try {
        nextDueAt = await dispatchOnce();
        failures = 0;
      } catch (error) {
        failures += 1;
        logger.error({ err: error, failures }, 'task dispatch round failed');
        if (failures >= MAX_FAILURES_IN_A_ROW) {
          logger.fatal({ failures }, 'task dispatcher stopped after repeated failures');
          return;
        }
      }
      const untilDue = nextDueAt ? nextDueAt.getTime() - Date.now() + 5 : Infinity;
      await sleep(failures > 0 ? Math.min(config.TASK_POLL_MS * 2 ** failures, 30_000) : Math.min(config.TASK_POLL_MS, untilDue));
    }
  }

  return {
    name: 'task-dispatcher',
    start() {
      if (loop) return;
      unsubscribers.push(bus.onTopic('queueTasks', nudge), bus.onTopic('queue', nudge));
      renewal = startLeaseRenewal({
        leaseSeconds: config.TASK_LEASE_SECONDS,
        held: () => [...inflight.keys()],
        renew: (ids) => renewTaskLeases(db, ids, workerId, config.TASK_LEASE_SECONDS),
        logger,
        what: 'task',
      });
      loop = run();
    },
    async stop() {
      stopping = true;
      for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
      wakeUp.wake();
      await loop;
      // Running attempts may finish within TASK_STOP_WAIT_MS; the rest are interrupted and handed back.
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        Promise.all(inflight.values()).then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), config.TASK_STOP_WAIT_MS))),
      ]);
      clearTimeout(timer);
      if (!waited) {
        interrupt.abort();
        await Promise.all(inflight.values());
      }
      renewal?.stop();
      const handed = await handBackTasks(db, [...unsettled], workerId).catch((error: unknown) => {
        logger.error({ err: error }, 'handing tasks back failed; their leases expire and they run again');
        return 0;
      });
      if (handed) logger.info({ handed }, 'running tasks handed back for another process');
    },
    nudge,
  };
}
