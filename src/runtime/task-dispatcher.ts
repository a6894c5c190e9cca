import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { claimTasks, type ClaimedTask } from '../db/sql/claimTasks.js';
import { dispatchRound } from '../db/sql/dispatchRound.js';
import { settleTasks, type TaskSettlement } from '../db/sql/settleTask.js';
import { settleAndClaimTasks } from '../db/sql/settleAndClaimTasks.js';
import { handBackTasks, renewTaskLeases } from '../db/sql/taskLeases.js';
import type { AppServices } from '../services.js';
import type { Logger } from '../log.js';
import { runTaskAttempt } from '../tasks/run-task.js';
import type { Worker } from './types.js';
import { startLeaseRenewal } from './lease-renewal.js';
import { loopLimits, superviseLoop } from '../kit/supervised-loop.js';
import { createSettleRetry, settleUntilLanded } from '../kit/settle-retry.js';
import { untilDeadline } from '../kit/deadline.js';

// The task dispatcher of one process, on a supervised loop: unblock due tasks and find queues with runnable tasks
// (one statement) -> claim within each queue's free rate slots (src/db/sql/claimTasks.ts) -> run each claimed task
// without waiting -> settle while still holding its lease (attempts that end while a settle runs are settled together
// by the next one; a settle that fails is retried until it lands, the lease renewed meanwhile). The settle's
// transaction also claims, in the same queue, as many tasks as it frees slots (src/db/sql/settleAndClaimTasks.ts), so
// a busy queue's slots pass from task to task at each commit instead of idling until the next round. It sleeps until
// a NOTIFY (a task or queue changed in any process), freed slots the settle did not fill, or the next due instant
// wakes it; TASK_POLL_MS only bounds that sleep in case a wake-up is lost.
//
// Dispatch is fair: no queue holds more of this process's TASK_CONCURRENCY slots than its cap (its
// maxConcurrentDispatches, else TASK_QUEUE_CONCURRENCY, half the slots by default), so one queue whose targets hang
// leaves the others room. Within the caps, each round first gives every queue with runnable tasks up to an equal share
// of the slots, starting with a different queue each round, then the slots nobody else wants; and a settle hands its
// queue's freed slots back to it only up to that share while other queues wait.

/** Kept for the hand-back statement when a shutdown deadline is near. */
const HAND_BACK_RESERVE_MS = 500;

export function createTaskDispatcher(services: AppServices, log: Logger): Worker {
  const { db, config, bus, loops } = services;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const logger = log.child({ worker: 'task-dispatcher', workerId });
  const limits = loopLimits(config);
  const { backoff } = limits;
  /** Attempts running or waiting to settle: their leases are renewed until they settle. */
  const inflight = new Map<string, Promise<void>>();
  /** Slots of TASK_CONCURRENCY held for claims under way (their tasks are not in `inflight` yet). */
  let reserved = 0;
  /** Per queue: its attempts in `inflight`, and its slots reserved for claims under way. */
  const runningIn = new Map<string, number>();
  const reservedIn = new Map<string, number>();
  /** Per-process caps the last rounds read (null: the default share); queues with runnable tasks at the last round. */
  const caps = new Map<string, number | null>();
  let waiting: readonly string[] = [];
  /** Which queue the next round serves first. */
  let turn = 0;
  /** Claimed tasks whose attempt did not settle (interrupted, or the shutdown deadline came first); handed back on stop. */
  const unsettled = new Set<string>();
  const interrupt = new AbortController();
  /** stop() began: settles claim nothing more. */
  let stopping = false;
  const unsubscribers: (() => void)[] = [];
  const toSettle: { task: ClaimedTask; settlement: TaskSettlement; done: (kept: boolean) => void; failed: (error: unknown) => void }[] = [];
  let settling: Promise<void> | undefined;
  const retry = createSettleRetry({ backoff, loops, log: logger });

  /** Local slots free for a claim now. */
  const free = () => config.TASK_CONCURRENCY - inflight.size - reserved;
  const add = (counts: Map<string, number>, queue: string, n: number) => {
    const next = (counts.get(queue) ?? 0) + n;
    if (next === 0) counts.delete(queue);
    else counts.set(queue, next);
  };
  /** Slots `queue` holds in this process: attempts running or settling, and claims under way. */
  const heldBy = (queue: string) => (runningIn.get(queue) ?? 0) + (reservedIn.get(queue) ?? 0);
  /** The most slots `queue` may hold in this process. */
  const capOf = (queue: string) => Math.min(config.TASK_CONCURRENCY, caps.get(queue) ?? config.TASK_QUEUE_CONCURRENCY);
  /** An equal share of the slots among the queues that want some (`queue` among them). */
  const shareOf = (queue: string) => Math.ceil(config.TASK_CONCURRENCY / new Set([...waiting, queue]).size);
  const reserve = (queue: string, n: number) => {
    reserved += n;
    add(reservedIn, queue, n);
  };
  const track = (task: ClaimedTask, run: Promise<void>) => {
    if (!inflight.has(task.id)) add(runningIn, task.queueName, 1);
    inflight.set(task.id, run);
  };
  const untrack = (task: ClaimedTask) => {
    if (inflight.delete(task.id)) add(runningIn, task.queueName, -1);
  };

  async function flushSettlements(): Promise<void> {
    while (toSettle.length) {
      const batch = toSettle.splice(0, 500);
      const items = batch.map(({ task, settlement }) => ({ id: task.id, settlement }));
      // The queue most of the batch belongs to gets the slots its settled tasks free (never more than free locally).
      const perQueue = new Map<string, number>();
      for (const { task } of batch) perQueue.set(task.queueName, (perQueue.get(task.queueName) ?? 0) + 1);
      const [queueName, settledThere] = [...perQueue].reduce((a, b) => (b[1] > a[1] ? b : a));
      // What the queue holds once this batch has settled: its own cap bounds the refill, and while other queues wait
      // so does its share (the slots it does not take go to them at the next round).
      const heldAfter = heldBy(queueName) - settledThere;
      const othersWait = waiting.some((q) => q !== queueName);
      const limit = Math.max(0, Math.min(settledThere, free() + batch.length, capOf(queueName) - heldAfter, othersWait ? shareOf(queueName) - heldAfter : Infinity));
      reserve(queueName, limit);
      let claimed: ClaimedTask[] = [];
      try {
        const kept = await settleUntilLanded(
          `settle ${batch.length} task attempt(s)`,
          async () => {
            if (limit === 0 || stopping) return settleTasks(db, workerId, items);
            const landed = await settleAndClaimTasks(db, workerId, items, { queueName, limit, leaseSeconds: config.TASK_LEASE_SECONDS });
            claimed = landed.claimed;
            return landed.settled;
          },
          retry,
        );
        for (const { task } of batch) untrack(task);
        for (const item of batch) item.done(kept.has(item.task.id));
      } catch (error) {
        for (const item of batch) item.failed(error);
      } finally {
        reserve(queueName, -limit);
      }
      startAll(claimed);
      // Slots the settle freed and did not fill may serve other queues (or this one, once more becomes runnable).
      if (claimed.length < batch.length) dispatch.nudge();
    }
    settling = undefined;
  }

  function settle(task: ClaimedTask, settlement: TaskSettlement): Promise<boolean> {
    return new Promise((done, failed) => {
      toSettle.push({ task, settlement, done, failed });
      settling ??= flushSettlements();
    });
  }

  async function runClaimed(task: ClaimedTask): Promise<void> {
    unsettled.add(task.id);
    try {
      const settlement = await runTaskAttempt(task, interrupt.signal, services.outbound, config.TASK_MAX_TIMEOUT_SECONDS);
      if (!settlement) return;
      const kept = await settle(task, settlement);
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
      ...limits,
      /** One round; sleeps until something next becomes due (at most TASK_POLL_MS). */
      async round(signal) {
        const { queues, untilDueMs, unblocked } = await dispatchRound(db);
        for (const queue of queues) caps.set(queue.name, queue.maxConcurrentDispatches);
        waiting = queues.map((q) => q.name);
        const first = queues.length ? turn++ % queues.length : 0;
        const order = [...waiting.slice(first), ...waiting.slice(0, first)];
        // First up to an equal share each, then what is left up to each queue's cap (slots no other queue wants now).
        const share = Math.ceil(config.TASK_CONCURRENCY / Math.max(1, order.length));
        const drained = new Set<string>();
        for (const upTo of [share, Infinity]) {
          for (const queue of order) {
            if (free() <= 0 || signal.aborted) break;
            const limit = Math.min(free(), capOf(queue) - heldBy(queue), upTo - heldBy(queue));
            if (limit <= 0 || drained.has(queue)) continue;
            reserve(queue, limit);
            let claimed: ClaimedTask[];
            try {
              claimed = await claimTasks(db, queue, workerId, limit, config.TASK_LEASE_SECONDS);
            } finally {
              reserve(queue, -limit);
            }
            if (claimed.length < limit) drained.add(queue); // it has no more runnable tasks (or rate) now
            startAll(claimed);
          }
        }
        if (unblocked > 0) return 0; // runnable from the next round on
        const untilDue = untilDueMs === null ? Infinity : untilDueMs + 5;
        return Math.max(0, Math.min(config.TASK_POLL_MS, untilDue));
      },
    }),
  );

  function startAll(claimed: readonly ClaimedTask[]): void {
    for (const task of claimed) {
      if (task.status === 'RUNNING') start(task);
      else logger.warn({ task: `${task.queueName}/${task.name}`, attempts: task.attempts }, 'task FAILED: the lease of its last attempt expired');
    }
  }

  function start(task: ClaimedTask): void {
    const run = runClaimed(task).finally(() => {
      // Settled attempts left `inflight` with their settle; these ended otherwise (interrupted, or the settle gave up).
      if (inflight.get(task.id) === run) {
        untrack(task);
        dispatch.nudge();
      }
    });
    track(task, run);
  }

  /** Until no attempt runs or waits to settle (a settle under way at stop() may still start what it claimed). */
  async function drained(): Promise<void> {
    while (inflight.size) await Promise.all(inflight.values());
  }

  const renewal = startLeaseRenewal({
    leaseSeconds: config.TASK_LEASE_SECONDS,
    held: () => [...inflight.keys()],
    renew: (ids) => renewTaskLeases(db, ids, workerId, config.TASK_LEASE_SECONDS),
    logger,
    what: 'task',
    loops,
    limits,
  });

  return {
    name: 'task-dispatcher',
    start() {
      unsubscribers.push(bus.onTopic('queueTasks', dispatch.nudge), bus.onTopic('queue', dispatch.nudge));
      dispatch.start();
      renewal.start();
    },
    async stop(deadline) {
      stopping = true;
      for (const unsubscribe of unsubscribers.splice(0)) unsubscribe();
      await dispatch.stop(deadline - HAND_BACK_RESERVE_MS);
      // Running attempts may finish within TASK_STOP_WAIT_MS (and before the deadline); the rest are interrupted.
      const waitMs = Math.min(config.TASK_STOP_WAIT_MS, deadline - HAND_BACK_RESERVE_MS - Date.now());
      if (!(await untilDeadline(drained(), waitMs))) interrupt.abort();
      // Settles still retrying give up when only the hand-back's time is left; one waiting on a database that does not
      // answer is left behind then (its lease decides).
      const cancelGiveUp = retry.giveUpAt(deadline - HAND_BACK_RESERVE_MS);
      await untilDeadline(drained(), deadline - HAND_BACK_RESERVE_MS - Date.now());
      cancelGiveUp();
      await renewal.stop(deadline - HAND_BACK_RESERVE_MS);
      let handed = 0;
      const handing = handBackTasks(db, [...unsettled], workerId).then(
        (n) => (handed = n),
        (error: unknown) => logger.error({ err: error }, 'handing tasks back failed; their leases expire and they run again'),
      );
      if (!(await untilDeadline(handing, deadline - Date.now()))) logger.error('handing tasks back got no answer by the shutdown deadline; their leases expire and they run again');
      if (handed) logger.info({ handed }, 'running tasks handed back for another process');
    },
    nudge: dispatch.nudge,
  };
}
