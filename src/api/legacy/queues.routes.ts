import { z } from 'zod';
import type { Config } from '../../config.js';
import { queueFilter, queueLabel, queueName, queueRules } from '../../queues/queue-rules.js';
import * as op from '../../generated/graphql/graphql.js';
import { legacyPage, pageVariables } from './paging.js';
import { fieldRoute, rpcRoute, type RpcRoute } from './route.js';
import { data, object, orElse, param } from './answer-shape.js';

// Spec 4.3, the twelve queue paths. Queues answer as the LegacyQueue fragment selects them.

const byName = z.strictObject({ name: queueName });
const same = <T>(queue: T) => ({ result: queue });

export function queueRoutes(config: Config): RpcRoute[] {
  const rules = queueRules(config.QUEUE_MAX_RATE);
  return [
    rpcRoute({
      area: 'queues',
      path: '/createQueue',
      summary: 'Creates a queue (status OPEN unless given).',
      params: rules.create,
      document: op.CreateQueueDocument,
      variables: (p) => ({ input: p }),
      result: (d) => same(d.createQueue),
      answer: { result: data('createQueue') },
    }),
    rpcRoute({
      area: 'queues',
      path: '/getQueue',
      summary: 'Returns the queue found by name.',
      params: byName,
      document: op.GetQueueDocument,
      variables: (p) => ({ name: p.name }),
      result: (d) => same(d.queue),
      answer: { result: data('queue') },
    }),
    rpcRoute({
      area: 'queues',
      path: '/listQueues',
      summary: 'Returns queues ordered by name, a page at a time.',
      params: z.strictObject(legacyPage(config.MAX_PAGE_SIZE)),
      document: op.ListQueuesDocument,
      variables: (p, env) => pageVariables(p, env.defaultPageSize),
      result: (d, p) => ({
        result: { queues: d.queues.nodes, totalCount: d.queues.totalCount, pageNumber: p.pageNumber ?? 0, pageSize: p.pageSize ?? null },
      }),
      answer: {
        result: object({ queues: data('queues', 'nodes'), totalCount: data('queues', 'totalCount'), pageNumber: orElse(param('pageNumber'), 0), pageSize: orElse(param('pageSize'), null) }),
      },
    }),
    fieldRoute({ area: 'queues', path: '/deleteQueue', summary: 'Deletes the queue whose name is given, with its tasks; refused while one of them runs.', params: byName, document: op.DeleteQueueDocument, field: 'deleteQueue' }),
    fieldRoute({ area: 'queues', path: '/openQueue', summary: 'Sets status OPEN and updateTime to now.', params: byName, document: op.OpenQueueDocument, field: 'openQueue' }),
    fieldRoute({ area: 'queues', path: '/closeQueue', summary: 'Sets status CLOSE and updateTime to now.', params: byName, document: op.CloseQueueDocument, field: 'closeQueue' }),
    rpcRoute({
      area: 'queues',
      path: '/updateQueue',
      summary: 'Changes a queue and returns it.',
      params: rules.update.extend({ name: queueName }),
      document: op.UpdateQueueDocument,
      variables: ({ name, ...input }) => ({ name, input }),
      result: (d) => same(d.updateQueue),
      answer: { result: data('updateQueue') },
    }),
    rpcRoute({
      area: 'queues',
      path: '/searchQueue',
      summary: 'Returns the queues matching name prefix, status, paused and label; adds rowsCount.',
      params: queueFilter.extend(legacyPage(config.MAX_PAGE_SIZE)),
      document: op.SearchQueuesDocument,
      variables: ({ pageSize, pageNumber, ...filter }, env) => ({ filter, ...pageVariables({ pageSize, pageNumber }, env.defaultPageSize) }),
      result: (d) => ({ result: d.queues.nodes, rowsCount: d.queues.totalCount }),
      answer: { result: data('queues', 'nodes'), rowsCount: data('queues', 'totalCount') },
    }),
    rpcRoute({
      area: 'queues',
      path: '/searchQueueLabels',
      summary: 'Returns the queues of a group (label) name; adds rowsCount.',
      params: z.strictObject({ label: queueLabel, ...legacyPage(config.MAX_PAGE_SIZE) }),
      document: op.SearchQueuesDocument,
      variables: ({ label, ...page }, env) => ({ filter: { label }, ...pageVariables(page, env.defaultPageSize) }),
      result: (d) => ({ result: d.queues.nodes, rowsCount: d.queues.totalCount }),
      answer: { result: data('queues', 'nodes'), rowsCount: data('queues', 'totalCount') },
    }),
    rpcRoute({
      area: 'queues',
      path: '/changeQueueRate',
      summary: 'Changes rate, the maximum number of tasks run in parallel.',
      params: z.strictObject({ name: queueName, rate: rules.rate }),
      document: op.ChangeQueueRateDocument,
      variables: (p) => p,
      result: (d) => same(d.changeQueueRate),
      answer: { result: data('changeQueueRate') },
    }),
    fieldRoute({ area: 'queues', path: '/pauseQueue', summary: 'Cancels automatic start of tasks in the queue.', params: byName, document: op.PauseQueueDocument, field: 'pauseQueue', paramsMayComeAsResult: true }),
    fieldRoute({ area: 'queues', path: '/resumeQueue', summary: 'Restores automatic start of tasks in the queue.', params: byName, document: op.ResumeQueueDocument, field: 'resumeQueue' }),
  ];
}
