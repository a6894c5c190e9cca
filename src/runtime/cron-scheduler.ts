import type { AppServices } from '../services.js';
import type { Logger } from '../log.js';
import { nextDueTime } from '../db/sql/nextDueTime.js';
import { fireDueJobs } from '../scheduler/firing.js';
import { reapJobInstances } from '../db/sql/reapJobInstances.js';
import type { JobExecutor } from '../scheduler/executor.js';
import type { Worker } from './types.js';
import { loopLimits, superviseLoop } from '../kit/supervised-loop.js';

// The cron scheduler of one process, two supervised loops: `cron` fires due jobs (claimed in batches), hands the
// instances to the executor and sleeps until the earliest nextRunTime (at most SCHEDULER_MAX_SLEEP_MS; a change to
// any job, topic job, cuts the sleep short; the bounded sleep guarantees progress when a NOTIFY is lost). What is due,
// and how long to sleep, is the database's clock's to say, not this process's (src/db/clock.ts);
// `job-reaper` fails, every SCHEDULER_REAP_INTERVAL_MS, the instances whose process died mid-run.

export function createCronScheduler(services: AppServices, executor: JobExecutor, log: Logger): Worker {
  const { db, config, bus, loops } = services;
  const options = { batchSize: config.SCHEDULER_BATCH_SIZE, misfireThresholdMs: config.SCHEDULER_MISFIRE_THRESHOLD_MS };
  const limits = loopLimits(config);
  let unsubscribe: (() => void) | undefined;

  const cron = loops.add(
    superviseLoop({
      name: 'cron',
      log,
      ...limits,
      async round(stopping) {
        if (stopping.aborted) return 0;
        const round = await fireDueJobs(db, executor.id, options);
        for (const instance of round.runnable) executor.start(instance);
        const late = round.fired.filter((f) => f.status === 'SKIPPED' || (round.nowMs ?? 0) - f.scheduledMs > options.misfireThresholdMs);
        if (late.length) log.warn({ count: late.length }, "cron occurrences misfired (see the instances' misfire field)");
        if (round.claimed >= options.batchSize) return 0;
        const untilDueMs = await nextDueTime(db);
        return untilDueMs === null ? config.SCHEDULER_MAX_SLEEP_MS : Math.min(Math.max(untilDueMs, 0), config.SCHEDULER_MAX_SLEEP_MS);
      },
    }),
  );

  const reaper = loops.add(
    superviseLoop({
      name: 'job-reaper',
      log,
      ...limits,
      async round() {
        const lost = await reapJobInstances(db);
        if (lost) log.warn({ count: lost }, 'job instances failed as lost: their gateway process stopped mid-run');
        return config.SCHEDULER_REAP_INTERVAL_MS;
      },
    }),
  );

  return {
    name: 'cron-scheduler',
    start() {
      unsubscribe = bus.onTopic('job', cron.nudge);
      cron.start();
      reaper.start();
    },
    async stop(deadline) {
      unsubscribe?.();
      await Promise.all([cron.stop(deadline), reaper.stop(deadline)]);
    },
    nudge: cron.nudge,
  };
}

/** The executor as a worker, so shutdown drains it; it stops after the scheduler that feeds it. */
export function executorWorker(executor: JobExecutor, feeder: Worker | undefined): Worker {
  return {
    name: 'job-executor',
    start() {},
    async stop(deadline) {
      await feeder?.stop(deadline);
      await executor.stop(deadline);
    },
    nudge() {},
  };
}
