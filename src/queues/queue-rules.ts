import { z } from 'zod';
import { builtOncePerLimits } from '../validation.js';

// Every rule about what a queue may hold; the GraphQL and JSON-RPC edges both validate with these schemas.

export const QUEUE_STATUS = { OPEN: 'OPEN', CLOSE: 'CLOSE' } as const;
export type QueueStatusName = keyof typeof QUEUE_STATUS;

export const queueName = z
  .string({ message: 'must be a string' })
  .regex(/^[A-Za-z0-9_.-]{1,128}$/, 'must be 1-128 characters of letters, digits, "_", "-" or "."');
export const queueLabel = z
  .string({ message: 'must be a string' })
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1-64 characters of letters, digits, "_", "-", "." or ":"');
const description = z.string({ message: 'must be a string' }).max(1024, 'at most 1024 characters');
const labels = z.array(queueLabel, { message: 'must be an array of strings' }).max(32, 'at most 32 labels');
/** Highest per-process cap a queue may set (TASK_CONCURRENCY's own bound). */
export const MAX_CONCURRENT_DISPATCHES = 10_000;
/** A queue's per-process cap; 0 stands for "the default" (TASK_QUEUE_CONCURRENCY), stored as null (src/queues/queues.ts). */
const maxConcurrentDispatches = z
  .number({ message: 'must be an integer' })
  .int('must be an integer')
  .min(0, 'must be at least 0 (0: the default, TASK_QUEUE_CONCURRENCY)')
  .max(MAX_CONCURRENT_DISPATCHES, `must be at most ${MAX_CONCURRENT_DISPATCHES}`);

export const queueRules = builtOncePerLimits((maxRate: number) => {
  const rate = z
    .number({ message: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(maxRate, `must be at most ${maxRate}`);
  return {
    create: z.strictObject({
      name: queueName,
      description: description.optional(),
      rate: rate.optional(),
      labels: labels.optional(),
      status: z.enum(['OPEN', 'CLOSE'], { message: 'must be OPEN or CLOSE' }).optional(),
      maxConcurrentDispatches: maxConcurrentDispatches.optional(),
    }),
    update: z.strictObject({
      description: description.optional(),
      rate: rate.optional(),
      labels: labels.optional(),
      maxConcurrentDispatches: maxConcurrentDispatches.optional(),
    }),
    rate,
  };
});

export const queueFilter = z.strictObject({
  namePrefix: z.string({ message: 'must be a string' }).max(128).optional(),
  status: z.enum(['OPEN', 'CLOSE'], { message: 'must be OPEN or CLOSE' }).optional(),
  paused: z.boolean({ message: 'must be a boolean' }).optional(),
  label: queueLabel.optional(),
});

export type QueueCreateInput = z.output<ReturnType<typeof queueRules>['create']>;
export type QueueUpdateInput = z.output<ReturnType<typeof queueRules>['update']>;
export type QueueFilter = z.output<typeof queueFilter>;
export type QueueOrder = 'NAME_ASC' | 'NAME_DESC' | 'CREATE_TIME_ASC' | 'CREATE_TIME_DESC';
