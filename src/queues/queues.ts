import type { PrismaClient, Queue, Prisma } from '../generated/prisma/client.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { translateWriteErrors } from '../db/errors.js';
import { dbNow } from '../db/clock.js';
import { notifyEvent } from '../db/sql/notifyEvent.js';
import { givenColumns, insertQueues, MAX_QUEUES_PER_STATEMENT, type NewQueue } from '../db/sql/insertQueue.js';
import { groupCommitPer } from '../db/group-commit.js';
import { countMatchingQueues, pageQueues, queuesOnPage } from '../db/sql/pageQueues.js';
import { queueByName } from '../db/sql/queueRow.js';
import { sharedRead } from '../db/coalesced-reads.js';
import { readPage, type Page, type Window } from '../pagination.js';
import type { QueueCreateInput, QueueFilter, QueueOrder, QueueStatusName, QueueUpdateInput } from './queue-rules.js';

// The queues area over Prisma. Inputs are already validated by the edge (queue-rules.ts).

export type { Queue };

export type QueueDeleteGuard = (tx: Prisma.TransactionClient, queueName: string) => Promise<void>;

export async function getQueue(db: PrismaClient, name: string): Promise<Queue> {
  const queue = await queueByName(db, name);
  if (!queue) throw new NotFoundError(`queue "${name}" not found`);
  return queue;
}

// Every caller of a list view asks the same page (its first, with its count): asked in one turn, it is read once.
const queryKey = (query: object) => JSON.stringify(query);
const sharedPage = sharedRead(pageQueues, queryKey);
const sharedPageOnly = sharedRead(queuesOnPage, queryKey);
const sharedCount = sharedRead(countMatchingQueues, queryKey);

export async function findQueues(db: PrismaClient, filter: QueueFilter, order: QueueOrder, window: Window): Promise<Page<Queue>> {
  return readPage(
    window,
    (skip, take) => sharedPageOnly(db, { ...filter, order, skip, take }),
    () => sharedCount(db, filter),
    (skip, take) => sharedPage(db, { ...filter, order, skip, take }),
  );
}

/** Writes one queue change and announces it in the same transaction. */
async function changeQueue(db: PrismaClient, name: string, run: (tx: Prisma.TransactionClient) => Promise<Queue>): Promise<Queue> {
  return translateWriteErrors(`queue "${name}"`, () =>
    db.$transaction(async (tx) => {
      const queue = await run(tx);
      await notifyEvent(tx, 'queue', queue.name);
      return queue;
    }),
  );
}

/**
 * Queues created at the same time share one statement and one NOTIFY (group commit, src/db/group-commit.ts): a NOTIFY
 * per creation capped creations at PostgreSQL's notify-commit lock. Two creations of one name never share one: the
 * later one finds the name taken, as if it came after.
 */
const creations = groupCommitPer('queue_create', (db: PrismaClient) => ({
  maxBatch: MAX_QUEUES_PER_STATEMENT,
  keyOf: (queue: NewQueue) => queue.name,
  shapeOf: givenColumns,
  write: (queues: NewQueue[]) => insertQueues(db, queues),
}));

/** A queue's per-process cap as stored: 0 (the default share) is null. */
const storedCap = (cap: number | undefined) => (cap === 0 ? null : cap);

export async function createQueue(db: PrismaClient, input: QueueCreateInput): Promise<Queue> {
  const queue = await creations(db).submit({ ...input, maxConcurrentDispatches: storedCap(input.maxConcurrentDispatches) });
  if (!queue) throw new ConflictError(`queue "${input.name}" already exists`);
  return queue;
}

export function updateQueue(db: PrismaClient, name: string, input: QueueUpdateInput): Promise<Queue> {
  const { maxConcurrentDispatches, ...rest } = input;
  const data = { ...rest, ...(maxConcurrentDispatches !== undefined && { maxConcurrentDispatches: storedCap(maxConcurrentDispatches) }), updateTime: dbNow(db) };
  return changeQueue(db, name, (tx) => tx.queue.update({ where: { name }, data }));
}

export function setQueueStatus(db: PrismaClient, name: string, status: QueueStatusName): Promise<Queue> {
  return changeQueue(db, name, (tx) => tx.queue.update({ where: { name }, data: { status, updateTime: dbNow(db) } }));
}

export function setQueuePaused(db: PrismaClient, name: string, paused: boolean): Promise<Queue> {
  return changeQueue(db, name, (tx) => tx.queue.update({ where: { name }, data: { paused, updateTime: dbNow(db) } }));
}

export function changeQueueRate(db: PrismaClient, name: string, rate: number): Promise<Queue> {
  return changeQueue(db, name, (tx) => tx.queue.update({ where: { name }, data: { rate, updateTime: dbNow(db) } }));
}

/** Deletes a queue; `guard` lets areas that hang off queues (tasks) refuse or clean up in the same transaction. */
export function deleteQueue(db: PrismaClient, name: string, guards: readonly QueueDeleteGuard[] = []): Promise<Queue> {
  return changeQueue(db, name, async (tx) => {
    const queue = await tx.queue.findUnique({ where: { name } });
    if (!queue) throw new NotFoundError(`queue "${name}" not found`);
    for (const guard of guards) await guard(tx, name);
    return tx.queue.delete({ where: { name } });
  });
}
