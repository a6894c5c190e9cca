import type { Prisma } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';

/** Added to the longest an instance can take (every attempt at its deadline, every backoff at its cap). */
export const LEASE_MARGIN_SECONDS = 60;

export interface Occurrence {
  name: string;
  /** The occurrence being fired (ISO, UTC); the job's nextRunTime must still equal it. */
  occurrence: string;
  /** The job's following occurrence (ISO), or null when the expression never fires again. */
  next: string | null;
  /** null: on time; FIRED_LATE / SKIPPED: the misfire rule applied. */
  misfire: 'FIRED_LATE' | 'SKIPPED' | null;
}

export interface FiredInstance {
  id: string;
  jobName: string;
  status: 'RUNNING' | 'SKIPPED';
  scheduledMs: number;
  target: unknown;
  retryCount: number;
  minBackoffMs: number;
  maxBackoffMs: number;
  maxDoublings: number;
  timeoutSeconds: number;
}

/**
 * The exactly-once step (STYLE rule 5), one statement: each job's nextRunTime moves from the occurrence to the next
 * one only if it still equals the occurrence and the job is ENABLED; each moved job gets one SCHEDULE instance
 * (unique per job and occurrence, so a replay inserts nothing), RUNNING and leased to `me`, or SKIPPED when the
 * misfire rule skips it; the jobs are announced on topic jobInstance, many keys per NOTIFY (payloads stay < 8000 bytes).
 */
export async function fireOccurrences(tx: Prisma.TransactionClient, me: string, now: Date, occurrences: Occurrence[]): Promise<FiredInstance[]> {
  return tx.$queryRaw<FiredInstance[]>`
    WITH v AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(occurrences)}::jsonb) AS v(name text, occurrence timestamptz, next timestamptz, misfire text)
    ), moved AS (
      UPDATE "Job" j
      SET "nextRunTime" = v.next AT TIME ZONE 'UTC', "lastRunTime" = ${now.toISOString()}::timestamptz AT TIME ZONE 'UTC'
      FROM v
      WHERE j.name = v.name AND j."nextRunTime" = v.occurrence AT TIME ZONE 'UTC' AND j.status = 'ENABLED'
      RETURNING j.name, v.occurrence, v.misfire, j.target, j."retryCount", j."minBackoffMs", j."maxBackoffMs", j."maxDoublings", j."timeoutSeconds"
    ), inserted AS (
      INSERT INTO "JobInstance" (id, "jobName", trigger, status, misfire, "scheduledTime", occurrence, "startTime", "finishTime", "updateTime", "lockedBy", "lockedUntil")
      SELECT gen_random_uuid()::text, m.name, 'SCHEDULE',
             (CASE WHEN m.misfire = 'SKIPPED' THEN 'SKIPPED' ELSE 'RUNNING' END)::"JobInstanceStatus",
             m.misfire::"JobInstanceMisfire",
             m.occurrence AT TIME ZONE 'UTC', m.occurrence AT TIME ZONE 'UTC',
             ${now.toISOString()}::timestamptz AT TIME ZONE 'UTC',
             CASE WHEN m.misfire = 'SKIPPED' THEN ${now.toISOString()}::timestamptz AT TIME ZONE 'UTC' END,
             ${now.toISOString()}::timestamptz AT TIME ZONE 'UTC',
             CASE WHEN m.misfire = 'SKIPPED' THEN NULL ELSE ${me} END,
             CASE WHEN m.misfire = 'SKIPPED' THEN NULL
                  ELSE (${now.toISOString()}::timestamptz AT TIME ZONE 'UTC')
                       + (m."timeoutSeconds" * (m."retryCount" + 1) + m."maxBackoffMs" / 1000.0 * m."retryCount" + ${LEASE_MARGIN_SECONDS}) * interval '1 second' END
      FROM moved m
      ON CONFLICT ("jobName", occurrence) DO NOTHING
      RETURNING id, "jobName", status::text AS status, occurrence
    )
    , chunks AS (
      SELECT "jobName", (sum(length("jobName") + 3) OVER (ORDER BY "jobName") / 7000)::int AS chunk FROM inserted
    ), notified AS (
      SELECT count(*) AS n FROM (
        SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'jobInstance', 'keys', json_agg("jobName"))::text) FROM chunks GROUP BY chunk
      ) x
    )
    SELECT i.id, i."jobName", i.status, (extract(epoch FROM i.occurrence AT TIME ZONE 'UTC') * 1000)::float8 AS "scheduledMs",
           m.target, m."retryCount", m."minBackoffMs", m."maxBackoffMs", m."maxDoublings", m."timeoutSeconds"
    FROM inserted i JOIN moved m ON m.name = i."jobName"
    WHERE (SELECT count(*) FROM notified) >= 0`;
}
