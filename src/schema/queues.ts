import type { GraphQLContext } from './context.js';
import { builder } from './builder.js';
import { defineConnection, dropNulls, pageArgs, toConnection, validate, windowFromArgs } from './common.js';
import * as queues from '../queues/queues.js';
import { queueFilter, queueName, queueRules, type QueueOrder } from '../queues/queue-rules.js';
import { liveState, topicChanges } from '../events/live.js';
import { CURRENT_ARG } from './live-args.js';

const QueueStatus = builder.enumType('QueueStatus', {
  description: 'Whether a queue accepts new tasks.',
  values: {
    OPEN: { description: 'The queue accepts and runs tasks.' },
    CLOSE: { description: 'The queue refuses new tasks.' },
  },
});

const QueueOrderEnum = builder.enumType('QueueOrder', {
  description: 'Order of a queue list.',
  values: {
    NAME_ASC: { description: 'By name, A to Z (the default).' },
    NAME_DESC: { description: 'By name, Z to A.' },
    CREATE_TIME_ASC: { description: 'Oldest first.' },
    CREATE_TIME_DESC: { description: 'Newest first.' },
  },
});

// A Queue has no relations, so the fields that return one are plain fields: a prismaField would work out, from each
// request's selection, a Prisma query that the resolvers (own statements, src/queues/queues.ts) never use.
export const QueueRef = builder.prismaObject('Queue', {
  description: 'A named queue of tasks.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Unique name: 1-128 letters, digits, "_", "-" or ".".' }),
    description: t.exposeString('description', { description: 'Free text.' }),
    status: t.field({ type: QueueStatus, description: 'OPEN accepts tasks, CLOSE refuses them.', resolve: (q) => q.status }),
    paused: t.exposeBoolean('paused', { description: 'Automatic start of tasks is suspended.' }),
    rate: t.exposeInt('rate', { description: 'Maximum number of tasks run in parallel, across all gateway processes.' }),
    maxConcurrentDispatches: t.exposeInt('maxConcurrentDispatches', {
      nullable: true,
      description:
        "The most of this queue's tasks one gateway process runs at once, so that a queue whose targets hang cannot take every task slot of a process (TASK_CONCURRENCY); null: the process's default share (TASK_QUEUE_CONCURRENCY, half of TASK_CONCURRENCY unless set). The queue's rate still bounds them across all processes.",
    }),
    labels: t.exposeStringList('labels', { description: 'Group names, searchable with `queues(filter: {label})`.' }),
    createTime: t.expose('createTime', { type: 'DateTime', description: 'When the queue was created.' }),
    updateTime: t.expose('updateTime', { type: 'DateTime', description: 'When the queue last changed (open and close set it).' }),
  }),
});

const QueueConnection = defineConnection('Queue', QueueRef, 'queue');

const QueueFilterInput = builder.inputType('QueueFilter', {
  description: 'Conditions a queue must meet; all given conditions apply.',
  fields: (t) => ({
    namePrefix: t.string({ description: 'Name starts with this text.' }),
    status: t.field({ type: QueueStatus, description: 'Status equals this.' }),
    paused: t.boolean({ description: 'Paused equals this.' }),
    label: t.string({ description: 'The queue carries this group name.' }),
  }),
});

const CreateQueueInput = builder.inputType('CreateQueueInput', {
  description: 'A new queue.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Unique name.' }),
    description: t.string({ description: 'Free text.' }),
    rate: t.int({ description: 'Maximum parallel tasks (default 1).' }),
    labels: t.stringList({ description: 'Group names.' }),
    status: t.field({ type: QueueStatus, description: 'Initial status (default OPEN).' }),
    maxConcurrentDispatches: t.int({ description: "The most of this queue's tasks one gateway process runs at once (1-10000); absent or 0: the default share (TASK_QUEUE_CONCURRENCY)." }),
  }),
});

const UpdateQueueInput = builder.inputType('UpdateQueueInput', {
  description: 'Changes to a queue; absent fields stay as they are.',
  fields: (t) => ({
    description: t.string({ description: 'Free text.' }),
    rate: t.int({ description: 'Maximum parallel tasks.' }),
    labels: t.stringList({ description: 'Group names (replaces the list).' }),
    maxConcurrentDispatches: t.int({ description: "The most of this queue's tasks one gateway process runs at once (1-10000); 0: back to the default share (TASK_QUEUE_CONCURRENCY)." }),
  }),
});

builder.queryFields((t) => ({
  queue: t.field({
    type: QueueRef,
    extensions: { scope: 'queues:read' },
    description: 'One queue by name.',
    args: { name: t.arg.string({ required: true, description: 'Queue name.' }) },
    resolve: (_root, args, ctx) => queues.getQueue(ctx.db, validate(queueName, args.name, 'name')),
  }),
  queues: t.field({
    type: QueueConnection,
    extensions: { scope: 'queues:read' },
    description: 'Queues matching a filter, ordered (by name unless told otherwise), a page at a time.',
    args: {
      filter: t.arg({ type: QueueFilterInput, description: 'Conditions on the queues.' }),
      orderBy: t.arg({ type: QueueOrderEnum, description: 'Order (default NAME_ASC).' }),
      ...pageArgs(t.arg),
    },
    resolve: async (_root, args, ctx, info) => {
      const filter = validate(queueFilter, dropNulls(args.filter), 'filter');
      const page = await queues.findQueues(ctx.db, filter, (args.orderBy ?? 'NAME_ASC') as QueueOrder, windowFromArgs(ctx, args, info));
      return toConnection(page);
    },
  }),
}));


builder.mutationFields((t) => {
  const byName = (description: string, run: (ctx: GraphQLContext, name: string) => Promise<queues.Queue>) =>
    t.field({
      type: QueueRef,
      extensions: { scope: 'queues:write' },
      description,
      args: { name: t.arg.string({ required: true, description: 'Queue name.' }) },
      resolve: (_root, args, ctx) => run(ctx, validate(queueName, args.name, 'name')),
    });
  return {
    createQueue: t.field({
      type: QueueRef,
      extensions: { scope: 'queues:write' },
      description: 'Creates a queue; CONFLICT when the name is taken.',
      args: { input: t.arg({ type: CreateQueueInput, required: true, description: 'The queue.' }) },
      resolve: (_r, args, ctx) => queues.createQueue(ctx.db, validate(queueRules(ctx.config.QUEUE_MAX_RATE).create, dropNulls(args.input), 'input')),
    }),
    updateQueue: t.field({
      type: QueueRef,
      extensions: { scope: 'queues:write' },
      description: 'Changes a queue and returns it.',
      args: {
        name: t.arg.string({ required: true, description: 'Queue name.' }),
        input: t.arg({ type: UpdateQueueInput, required: true, description: 'The changes.' }),
      },
      resolve: (_r, args, ctx) =>
        queues.updateQueue(ctx.db, validate(queueName, args.name, 'name'), validate(queueRules(ctx.config.QUEUE_MAX_RATE).update, dropNulls(args.input), 'input')),
    }),
    changeQueueRate: t.field({
      type: QueueRef,
      extensions: { scope: 'queues:write' },
      description: 'Sets the maximum number of tasks the queue runs in parallel; takes effect at once.',
      args: {
        name: t.arg.string({ required: true, description: 'Queue name.' }),
        rate: t.arg.int({ required: true, description: 'New maximum, at least 1.' }),
      },
      resolve: (_r, args, ctx) =>
        queues.changeQueueRate(ctx.db, validate(queueName, args.name, 'name'), validate(queueRules(ctx.config.QUEUE_MAX_RATE).rate, args.rate, 'rate')),
    }),
    deleteQueue: byName('Deletes a queue and its tasks; refused while one of its tasks runs.', (ctx, name) => queues.deleteQueue(ctx.db, name, ctx.queueDeleteGuards)),
    openQueue: byName('Sets status OPEN and updateTime to now.', (ctx, name) => queues.setQueueStatus(ctx.db, name, 'OPEN')),
    closeQueue: byName('Sets status CLOSE and updateTime to now.', (ctx, name) => queues.setQueueStatus(ctx.db, name, 'CLOSE')),
    pauseQueue: byName('Stops automatic start of tasks; running tasks finish.', (ctx, name) => queues.setQueuePaused(ctx.db, name, true)),
    resumeQueue: byName('Restores automatic start of tasks.', (ctx, name) => queues.setQueuePaused(ctx.db, name, false)),
  };
});

builder.subscriptionFields((t) => ({
  queueChanged: t.prismaField({
    type: 'Queue',
    extensions: { scope: 'queues:read' },
    nullable: true,
    description: 'The queue each time it changes, made by any gateway process; null once it is deleted.',
    args: { name: t.arg.string({ required: true, description: 'Queue name.' }), current: t.arg.boolean(CURRENT_ARG) },
    subscribe: (_root, args, ctx) => {
      const name = validate(queueName, args.name, 'name');
      return liveState(ctx.bus, 'queue', name, { read: () => ctx.db.queue.findUnique({ where: { name } }) }, { current: args.current ?? false });
    },
    resolve: (_query, queue) => queue,
  }),
  queuesChanged: t.field({
    type: 'String',
    extensions: { scope: 'queues:read' },
    nullable: true,
    description:
      'The name of a queue each time one is created, changed or deleted, by any gateway process; null when changes may have been missed (the gateway lost its event connection for a while). A list of queues reads itself again on either. Names not taken yet are sent once each.',
    subscribe: (_root, _args, ctx) => topicChanges(ctx.bus, 'queue'),
    resolve: (name) => name,
  }),
}));
