import { z } from 'zod';
import type { Config } from '../../config.js';
import { queueName } from '../../queues/queue-rules.js';
import { createTaskRule, taskFilter, taskKey } from '../../tasks/task-rules.js';
import { TASK_STATUSES } from '../../db/task-transitions.js';
import * as op from '../../generated/graphql/graphql.js';
import { legacyPage, pageVariables } from './paging.js';
import { fieldRoute, rpcRoute, type RpcRoute } from './route.js';
import { data, object, orElse, param } from './answer-shape.js';

// Spec 4.3, the seven task paths. Tasks answer as the LegacyTask fragment selects them.

const same = <T>(task: T) => ({ result: task });

/** A path that names one task and answers it as its operation's root field returns it. */

export function taskRoutes(config: Config): RpcRoute[] {
  return [
    rpcRoute({
      area: 'tasks',
      path: '/createTask',
      summary: 'Creates a task in an OPEN queue: READY, or BLOCKED until its dependsOn tasks succeed and its scheduleTime comes.',
      params: createTaskRule(config.TASK_MAX_TIMEOUT_SECONDS),
      document: op.CreateTaskDocument,
      variables: ({ scheduleTime, ...input }) => ({ input: { ...input, ...(scheduleTime && { scheduleTime: scheduleTime.toISOString() }) } }),
      result: (d) => same(d.createTask),
      answer: { result: data('createTask') },
    }),
    fieldRoute({ area: 'tasks', path: '/getTask', summary: 'Returns the task found by queue name and name.', params: taskKey, document: op.GetTaskDocument, field: 'task' }),
    rpcRoute({
      area: 'tasks',
      path: '/listTasks',
      summary: 'Returns tasks (of one queue when queueName is given) ordered by name, a page at a time.',
      params: z.strictObject({ queueName: queueName.optional(), ...legacyPage(config.MAX_PAGE_SIZE) }),
      document: op.SearchTasksDocument,
      variables: ({ queueName: queue, ...page }, env) => ({ filter: queue ? { queueName: queue } : null, ...pageVariables(page, env.defaultPageSize) }),
      result: (d, p) => ({
        result: { tasks: d.tasks.nodes, totalCount: d.tasks.totalCount, pageNumber: p.pageNumber ?? 0, pageSize: p.pageSize ?? null },
      }),
      answer: {
        result: object({ tasks: data('tasks', 'nodes'), totalCount: data('tasks', 'totalCount'), pageNumber: orElse(param('pageNumber'), 0), pageSize: orElse(param('pageSize'), null) }),
      },
    }),
    rpcRoute({
      area: 'tasks',
      path: '/searchTasks',
      summary: 'Returns the tasks matching queue name, name prefix, description text and status, ordered by name; adds rowsCount.',
      // The spec's four conditions; the GraphQL filter's later ones (substring, error, time) are not legacy parameters.
      params: taskFilter.pick({ queueName: true, name: true, description: true, status: true }).extend(legacyPage(config.MAX_PAGE_SIZE)),
      document: op.SearchTasksDocument,
      variables: ({ pageSize, pageNumber, ...filter }, env) => ({ filter, ...pageVariables({ pageSize, pageNumber }, env.defaultPageSize) }),
      result: (d) => ({ result: d.tasks.nodes, rowsCount: d.tasks.totalCount }),
      answer: { result: data('tasks', 'nodes'), rowsCount: data('tasks', 'totalCount') },
    }),
    rpcRoute({
      area: 'tasks',
      path: '/getTasksSummary',
      summary: "Returns the count of every task status of a queue, zeros included: {queueName, total, BLOCKED, READY, ...}.",
      params: z.strictObject({ queueName }),
      document: op.GetTasksSummaryDocument,
      variables: (p) => p,
      result: ({ tasksSummary: s }) => ({
        result: { queueName: s.queueName, total: s.total, ...Object.fromEntries(TASK_STATUSES.map((status) => [status, s[status.toLowerCase() as Lowercase<typeof status>]])) },
      }),
      answer: {
        result: object({
          queueName: data('tasksSummary', 'queueName'),
          total: data('tasksSummary', 'total'),
          ...Object.fromEntries(TASK_STATUSES.map((status) => [status, data('tasksSummary', status.toLowerCase())])),
        }),
      },
    }),
    fieldRoute({ area: 'tasks', path: '/cancelTask', summary: 'Cancels a task with status READY or BLOCKED (it becomes CANCELLED); any other status is an error that changes nothing.', params: taskKey, document: op.CancelTaskDocument, field: 'cancelTask' }),
    fieldRoute({ area: 'tasks', path: '/restartTask', summary: 'Restarts a task with status FAILED (it becomes READY, attempts reset); any other status is an error that changes nothing.', params: taskKey, document: op.RestartTaskDocument, field: 'restartTask' }),
  ];
}
