import type { AppServices } from '../services.js';
import type { Logger } from '../log.js';
import { createCronScheduler, executorWorker } from './cron-scheduler.js';
import { createDeliveryWorker } from './delivery-worker.js';
import { createTaskDispatcher } from './task-dispatcher.js';
import { createClockCheck } from './clock-check.js';
import type { Worker } from './types.js';

/** The background workers of one process; each area that has one adds it here. `clockOff`: the start-up measurement found the clock off. */
export function createWorkers(services: AppServices, log: Logger, clockOff = false): Worker[] {
  const scheduler = services.config.SCHEDULER ? createCronScheduler(services, services.jobExecutor, log.child({ worker: 'cron-scheduler' })) : undefined;
  const workers: Worker[] = [createClockCheck(services, log.child({ worker: 'clock' }), clockOff), ...(scheduler ? [scheduler] : []), executorWorker(services.jobExecutor, scheduler)];
  if (services.config.TASK_DISPATCHER) workers.push(createTaskDispatcher(services, log));
  if (services.config.DELIVERY_WORKER) workers.push(createDeliveryWorker(services, log));
  return workers;
}
