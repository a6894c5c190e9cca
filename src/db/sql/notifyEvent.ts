import type { Prisma } from '../../generated/prisma/client.js';

export const EVENTS_CHANNEL = 'gateway_events';

/** Queues a NOTIFY that is delivered when `tx` commits, so no subscriber ever sees a change that rolled back. */
export async function notifyEvent(tx: Prisma.TransactionClient, topic: string, key: string): Promise<void> {
  const payload = JSON.stringify({ topic, key });
  await tx.$executeRaw`SELECT pg_notify(${EVENTS_CHANNEL}, ${payload})`;
}
