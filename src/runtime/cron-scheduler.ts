import type { AppServices } from '../graphql/context.js';
import type { Logger } from '../log.js';
import { nextDueTime } from '../db/sql/nextDueTime.js';
import { fireDueJobs } from '../scheduler/firing.js';
import { reapJobInstances } from '../db/sql/reapJobInstances.js';
import type { JobExecutor } from '../scheduler/executor.js';
import type { Worker } from './types.js';
import { createWakeUp } from './wake-up.js';

// The cron scheduler of one process: fail instances whose process died (every SCHEDULER_REAP_INTERVAL_MS), fire due jobs (claimed in batches) -> hand the instances to the executor ->
// sleep until the earliest nextRunTime (at most SCHEDULER_MAX_SLEEP_MS). A change to any job (topic job) cuts the
// sleep short; the bounded sleep guarantees progress when a NOTIFY is lost.

const MAX_FAILURES_IN_A_ROW = 10;

export function createCronScheduler(services: AppServices, executor: JobExecutor, log: Logger): Worker {
  const { db, config, bus } = services;
  const options = { batchSize: config.SCHEDULER_BATCH_SIZE, misfireThresholdMs: config.SCHEDULER_MISFIRE_THRESHOLD_MS };
  let stopping = false;
  let loop: Promise<void> | undefined;
  const wakeUp = createWakeUp();
  let unsubscribe: (() => void) | undefined;

  // Each sleep is a fresh wait: a change seen before it is read by the round that precedes it.
  const sleep = (ms: number) => {
    wakeUp.reset();
    return wakeUp.sleep(ms);
  };

  async function run(): Promise<void> {
    let failures = 0;
    let reapedAt = 0;
    while (!stopping) {
      try {
        if (Date.now() - reapedAt >= config.SCHEDULER_REAP_INTERVAL_MS) {
          reapedAt = Date.now();
          const lost = await reapJobInstances(db, new Date());
          if (lost) log.warn({ count: lost }, 'job instances failed as lost: their gateway process stopped mid-run');
        }
        const round = await fireDueJobs(db, executor.id, options);
        for (const instance of round.runnable) executor.start(instance);
        const late = round.fired.filter((f) => f.status === 'SKIPPED' || Date.now() - f.scheduledMs > options.misfireThresholdMs);
        if (late.length) log.warn({ count: late.length }, 'cron occurrences misfired (see the instances\' misfire field)');
        failures = 0;
        if (round.claimed >= options.batchSize) continue;
        const due = await nextDueTime(db);
        const wait = due === null ? config.SCHEDULER_MAX_SLEEP_MS : Math.min(Math.max(due - Date.now(), 0), config.SCHEDULER_MAX_SLEEP_MS);
        if (wait > 0 && !stopping) await sleep(wait);
      } catch (error) {
        failures += 1;
        log.error({ err: error, failures }, 'cron scheduler round failed');
        if (failures >= MAX_FAILURES_IN_A_ROW) {
          log.fatal({ failures }, 'cron scheduler stopped after repeated failures; no job of this process will fire');
          return;
        }
        if (!stopping) await sleep(config.SCHEDULER_MAX_SLEEP_MS);
      }
    }
  }

  const worker: Worker = {
    name: 'cron-scheduler',
    start() {
      if (loop) return;
      unsubscribe = bus.onTopic('job', () => worker.nudge());
      loop = run();
    },
    async stop() {
      stopping = true;
      unsubscribe?.();
      wakeUp.wake();
      await loop;
    },
    nudge() {
      wakeUp.wake();
    },
  };
  return worker;
}

/** The executor as a worker, so shutdown drains it; it stops after the scheduler that feeds it. */
export function executorWorker(executor: JobExecutor, feeder: Worker | undefined): Worker {
  return {
    name: 'job-executor',
    start() {},
    async stop() {
      await feeder?.stop();
      await executor.stop();
    },
    nudge() {},
  };
}
