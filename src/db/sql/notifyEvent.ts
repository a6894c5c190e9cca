import type { Prisma } from '../../generated/prisma/client.js';

export const EVENTS_CHANNEL = 'gateway_events';

/** The payload of an event on EVENTS_CHANNEL, as the event bus reads it. */
export function eventPayload(topic: string, key: string): string {
  return JSON.stringify({ topic, key });
}

/** Queues a NOTIFY that is delivered when `tx` commits, so no subscriber ever sees a change that rolled back. */
export async function notifyEvent(tx: Prisma.TransactionClient, topic: string, key: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${EVENTS_CHANNEL}, ${eventPayload(topic, key)})`;
}
