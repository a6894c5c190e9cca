import type { PrismaClient } from '../../generated/prisma/client.js';
import { untilDeadline } from '../../kit/deadline.js';

/** What a trivial statement found: the database answers, and whether it takes writes (a replica, or read-only after a failover, does not). */
export type DatabaseAnswer = 'ok' | 'read-only' | 'no-answer';

/** Asks the database, through the pool every request uses, within `timeoutMs`. */
export async function pingDatabase(db: PrismaClient, timeoutMs: number): Promise<DatabaseAnswer> {
  let answer: DatabaseAnswer = 'no-answer';
  await untilDeadline(
    db.$queryRaw<{ readOnly: boolean }[]>`SELECT (pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on') AS "readOnly"`.then(
      (rows) => (answer = rows[0]?.readOnly ? 'read-only' : 'ok'),
    ),
    timeoutMs,
  );
  return answer;
}
