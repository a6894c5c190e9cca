import type { DatabaseKind } from './databases.js';
import { rpc, startTestGateway, type RpcAnswer, type TestGateway } from './gateway.js';
import { startTaskSink, type TaskSink } from './task-sink.js';

// The tasks area's test gateway, shared by test/tasks.test.ts (run beside other files) and
// test/tasks-rate-change.test.ts (run alone: it bounds how soon a rate change starts tasks).

export interface TasksGateway {
  t: TestGateway;
  url: string;
  /** The peer every task target points at (test/helpers/task-sink.ts). */
  sink: TaskSink;
  close(): Promise<void>;
}

/** A task sink and a gateway whose dispatcher polls rarely (a start comes from a nudge) and hands tasks back quickly. */
export async function startTasksGateway(kind: DatabaseKind): Promise<TasksGateway> {
  const sink = await startTaskSink();
  const t = await startTestGateway(kind, { TASK_POLL_MS: '2000', TASK_STOP_WAIT_MS: '200' });
  return {
    t,
    url: t.url,
    sink,
    async close() {
      await t.close();
      await sink.close();
    },
  };
}

export interface TaskCalls {
  target(path?: string, extra?: Record<string, unknown>): Record<string, unknown>;
  create(queueName: string, name: string, extra?: Record<string, unknown>): Promise<RpcAnswer>;
  get(queueName: string, name: string): Promise<any>;
  statusOf(queueName: string, name: string): Promise<string>;
  summary(queueName: string): Promise<any>;
}

/** The calls the tasks tests make again and again, on the gateway `current()` returns (started in a beforeAll). */
export function taskCalls(current: () => TasksGateway): TaskCalls {
  const target = (path = '/ok', extra: Record<string, unknown> = {}) => ({ url: `${current().sink.url}${path}`, ...extra });
  const get = async (queueName: string, name: string) => (await rpc(current().url, 'getTask', { queueName, name })).body.result;
  return {
    target,
    create: (queueName, name, extra = {}) => rpc(current().url, 'createTask', { queueName, name, target: target(), ...extra }),
    get,
    statusOf: async (queueName, name) => (await get(queueName, name))?.status as string,
    summary: async (queueName) => (await rpc(current().url, 'getTasksSummary', { queueName })).body.result,
  };
}
