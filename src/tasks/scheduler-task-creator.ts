import type { AppServices } from '../graphql/context.js';
import type { TaskCreator } from '../scheduler/targets.js';
import { taskEventKey } from '../db/sql/taskEvents.js';
import { parseInput } from '../validation.js';
import { createTaskInput, type TaskStatusName } from './task-rules.js';
import { createTask, getTask } from './tasks.js';

// A scheduler job whose target is a task: each firing creates one task in the queue from the job's template
// (the createTask fields except queueName; the name defaults to <job>.<instance id>) and succeeds when the task does.

const FINAL: readonly TaskStatusName[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

export function createSchedulerTaskCreator(services: Pick<AppServices, 'db' | 'bus'>): TaskCreator {
  return {
    async createTask({ queue, template, jobName, instanceId, signal }) {
      const input = parseInput(createTaskInput, { name: `${jobName}.${instanceId}`, ...template, queueName: queue }, 'template');
      // Subscribe before creating: no status change can slip between the two.
      const events = services.bus.subscribe('task', taskEventKey(queue, input.name))[Symbol.asyncIterator]();
      try {
        const task = await createTask(services.db, input);
        let status = task.status as TaskStatusName;
        const aborted = new Promise<'aborted'>((resolve) => {
          if (signal.aborted) resolve('aborted');
          signal.addEventListener('abort', () => resolve('aborted'), { once: true });
        });
        while (!FINAL.includes(status)) {
          const next = await Promise.race([events.next(), aborted]);
          if (next === 'aborted') throw new Error(`interrupted while task "${input.name}" was ${status}`);
          if (next.done) break;
          status = next.value as TaskStatusName;
        }
        const final = await getTask(services.db, { queueName: queue, name: input.name });
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
