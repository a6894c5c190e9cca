import type { AppServices } from '../services.js';
import type { TaskCreator } from '../scheduler/targets.js';
import type { BusSignal } from '../events/bus.js';
import { taskEventKey } from '../db/sql/taskEvents.js';
import { parseInput } from '../validation.js';
import { createTaskRule } from './task-rules.js';
import { type TaskStatusName } from '../db/task-transitions.js';
import { createTask, getTask, taskStatusOf } from './tasks.js';

// A scheduler job whose target is a task: each firing creates one task in the queue from the job's template
// (the createTask fields except queueName; the name defaults to <job>.<instance id>) and succeeds when the task does.
// The wait follows the task's events, and re-reads its status after a resync and at least every WATCH_POLL_MS, so
// a lost NOTIFY costs latency, never the outcome.

const FINAL: readonly TaskStatusName[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
const WATCH_POLL_MS = 5000;

type Wake = { kind: 'signal'; result: IteratorResult<BusSignal> } | { kind: 'poll' } | { kind: 'aborted' };

export function createSchedulerTaskCreator(services: Pick<AppServices, 'db' | 'bus' | 'outbound' | 'config'>): TaskCreator {
  return {
    async createTask({ queue, template, jobName, instanceId, signal }) {
      const input = parseInput(createTaskRule(services.config.TASK_MAX_TIMEOUT_SECONDS), { name: `${jobName}.${instanceId}`, ...template, queueName: queue }, 'template');
      const key = { queueName: queue, name: input.name };
      // Subscribe before creating: no status change can slip between the two.
      const events = services.bus.subscribe('task', taskEventKey(queue, input.name));
      const aborted = new Promise<Wake>((resolve) => {
        if (signal.aborted) resolve({ kind: 'aborted' });
        signal.addEventListener('abort', () => resolve({ kind: 'aborted' }), { once: true });
      });
      try {
        const task = await createTask(services.db, input, services.outbound);
        let status = task.status as TaskStatusName;
        let nextSignal = events.next().then((result): Wake => ({ kind: 'signal', result }));
        while (!FINAL.includes(status)) {
          let timer: NodeJS.Timeout | undefined;
          const poll = new Promise<Wake>((resolve) => (timer = setTimeout(() => resolve({ kind: 'poll' }), WATCH_POLL_MS)));
          const wake = await Promise.race([nextSignal, aborted, poll]);
          clearTimeout(timer);
          if (wake.kind === 'aborted') throw new Error(`interrupted while task "${input.name}" was ${status}`);
          if (wake.kind === 'signal') {
            if (wake.result.done) break;
            nextSignal = events.next().then((result): Wake => ({ kind: 'signal', result }));
            if (wake.result.value.kind === 'event') {
              status = wake.result.value.detail as TaskStatusName;
              continue;
            }
          }
          // A poll or a resync: read the status itself (an unreachable database only means waiting longer).
          status = (await taskStatusOf(services.db, key).catch(() => null)) ?? status;
        }
        const final = await getTask(services.db, key);
        return {
          taskId: final.id,
          succeeded: final.status === 'SUCCEEDED',
          detail: { queueName: queue, name: final.name, status: final.status, ...(final.lastError && { lastError: final.lastError }) },
        };
      } finally {
        await events.return?.();
      }
    },
  };
}
