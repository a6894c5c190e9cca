import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

/** A complete "Notification" row as JSON (every column named; timestamps as ISO strings in UTC). */
export interface NotificationInsert {
  id: string;
  incomingId: string;
  systemId: string;
  channel: string;
  type: string;
  externalId: null;
  recipient: string;
  payload: unknown;
  reportForm: unknown;
  fileGroupId: string | null;
  status: string;
  flag: string;
  priority: number;
  sendAfter: string | null;
  sendBefore: string | null;
  availableAt: string;
  attempts: number;
  maxAttempts: number;
  lastError: null;
  lockedBy: null;
  lockedUntil: null;
  createTime: string;
  updateTime: string;
  deliveredTime: null;
}

/**
 * ONE statement: inserts the units of one accepted request and announces `notification`/incomingId (wakes the
 * delivery workers) when it commits. Returned unawaited so it can join an array transaction.
 */
export function insertNotifications(db: PrismaClient, incomingId: string, rows: NotificationInsert[]): Prisma.PrismaPromise<unknown> {
  const payload = JSON.stringify({ topic: 'notification', key: incomingId });
  return db.$executeRaw`
    WITH inserted AS (
      INSERT INTO "Notification"
      SELECT * FROM jsonb_populate_recordset(NULL::"Notification", ${JSON.stringify(rows)}::jsonb)
      RETURNING 1
    )
    SELECT pg_notify(${EVENTS_CHANNEL}, ${payload}) FROM (SELECT count(*) FROM inserted) AS c`;
}
