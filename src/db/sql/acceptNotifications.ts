import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { EVENTS_CHANNEL } from './notifyEvent.js';
import { statementsOf } from '../statements.js';

/** One sending request to accept: what is common to its delivery units (timestamps are ISO strings, UTC). */
export interface AcceptRequest {
  incomingId: string;
  systemId: string;
  channel: string;
  /** Idempotency-Key, or null. */
  key: string | null;
  /** SHA-256 of channel + body (compared with a stored record of the same key); '' without a key. */
  hash: string;
  /** The answer stored with the key (null without a key). */
  response: unknown;
  /** E-mail's file group: it must have been uploaded by the same system, else nothing is stored ('noFileGroup'). */
  fileGroupId: string | null;
  reportForm: unknown;
  flag: string;
  priority: number;
  sendAfter: string | null;
  sendBefore: string | null;
  availableAt: string;
  /** 1 + the waits of DELIVERY_RETRY_SCHEDULE; a system's own schedule (RetrySchedule) takes its place in the statement. */
  maxAttempts: number;
  createTime: string;
  units: { id: string; type: string; recipient: string; payload: unknown }[];
}

/**
 * The attempts a unit of request row `r` gets: 1 + the waits of its system's retry schedule for its channel, else for
 * all its channels ("*"), else the default schedule's (the request's `maxAttempts`).
 */
function attemptsAllowed(r: string): Prisma.Sql {
  const row = Prisma.raw(r);
  return Prisma.sql`coalesce((SELECT cardinality(rs."scheduleMs") + 1 FROM "RetrySchedule" rs
      WHERE rs."systemId" = ${row}."systemId" AND rs.channel IN (${row}.channel, '*') ORDER BY rs.channel = '*' LIMIT 1), ${row}."maxAttempts")`;
}

/**
 * accepted: its units (and its key's record) are stored; replay: the key answered this body before (`response`);
 * conflict: the key answered another body; noFileGroup: nothing stored; raced: a concurrent request stored the key
 * after this statement began (read the record again).
 */
export type AcceptOutcome = { outcome: 'accepted' | 'conflict' | 'noFileGroup' | 'raced'; response: null } | { outcome: 'replay'; response: unknown };

/**
 * ONE statement for any number of requests (no two with the same systemId + key): a key already answered within the
 * TTL (createTime >= keptSince) replays or conflicts; otherwise the key's record is inserted (an expired one replaced,
 * the system's other expired records deleted) and the request's units are inserted PENDING, all announced on topic
 * `notification` (keys = incomingIds, payloads < 8000 bytes) when the statement commits: it wakes delivery workers.
 * Answers one outcome per request, in order.
 */
export async function acceptNotifications(db: PrismaClient, requests: AcceptRequest[], keptSince: Date): Promise<AcceptOutcome[]> {
  if (requests.every((r) => r.key === null && r.fileGroupId === null)) return insertOnly(db, requests);
  const reqs = requests.map(({ units: _u, ...r }, i) => ({ ...r, i }));
  const units = requests.flatMap((r, i) => r.units.map((u) => ({ ...u, i })));
  const rows = await statementsOf(db).rows<{ i: number; outcome: AcceptOutcome['outcome']; response: unknown }>(Prisma.sql`
    WITH req AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(reqs)}::jsonb) AS r(
        i int, "incomingId" uuid, "systemId" text, channel text, key text, hash text, response jsonb, "fileGroupId" uuid,
        "reportForm" jsonb, flag text, priority int, "sendAfter" timestamptz, "sendBefore" timestamptz, "availableAt" timestamptz,
        "maxAttempts" int, "createTime" timestamptz)
    ), prior AS (
      SELECT req.i, rec."requestHash" = req.hash AS same, rec.response
      FROM req JOIN "IdempotencyRecord" rec
        ON rec."systemId" = req."systemId" AND rec.key = req.key AND rec."createTime" >= ${keptSince.toISOString()}::timestamptz AT TIME ZONE 'UTC'
    ), fresh AS (
      SELECT req.* FROM req
      WHERE NOT EXISTS (SELECT 1 FROM prior WHERE prior.i = req.i)
        AND (req."fileGroupId" IS NULL OR EXISTS (SELECT 1 FROM "FileGroup" g WHERE g.id = req."fileGroupId" AND g."systemId" = req."systemId"))
    ), purged AS (
      DELETE FROM "IdempotencyRecord" d
      WHERE d."systemId" = ANY (ARRAY(SELECT DISTINCT "systemId" FROM fresh WHERE key IS NOT NULL)) -- by the key's index, not a scan of every system
        AND d."createTime" < ${keptSince.toISOString()}::timestamptz AT TIME ZONE 'UTC'
        AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f."systemId" = d."systemId" AND f.key = d.key)
      RETURNING 1
    ), kept AS (
      INSERT INTO "IdempotencyRecord" ("systemId", key, "requestHash", response, "createTime")
      SELECT "systemId", key, hash, response, "createTime" AT TIME ZONE 'UTC' FROM fresh WHERE key IS NOT NULL
      ON CONFLICT ("systemId", key) DO UPDATE
        SET "requestHash" = EXCLUDED."requestHash", response = EXCLUDED.response, "createTime" = EXCLUDED."createTime"
        WHERE "IdempotencyRecord"."createTime" < ${keptSince.toISOString()}::timestamptz AT TIME ZONE 'UTC'
      RETURNING "systemId", key
    ), accepted AS (
      SELECT fresh.* FROM fresh
      WHERE fresh.key IS NULL OR EXISTS (SELECT 1 FROM kept WHERE kept."systemId" = fresh."systemId" AND kept.key = fresh.key)
    ), inserted AS (
      INSERT INTO "Notification" (id, "incomingId", "systemId", channel, type, recipient, payload, "reportForm", "fileGroupId", status,
                                  flag, priority, "sendAfter", "sendBefore", "availableAt", attempts, "maxAttempts", "createTime", "updateTime")
      SELECT u.id, a."incomingId", a."systemId", a.channel, u.type, u.recipient, u.payload, a."reportForm", a."fileGroupId", 'PENDING',
             a.flag, a.priority, a."sendAfter" AT TIME ZONE 'UTC', a."sendBefore" AT TIME ZONE 'UTC', a."availableAt" AT TIME ZONE 'UTC', 0,
             ${attemptsAllowed('a')}, a."createTime" AT TIME ZONE 'UTC', a."createTime" AT TIME ZONE 'UTC'
      FROM jsonb_to_recordset(${JSON.stringify(units)}::jsonb) AS u(i int, id uuid, type text, recipient text, payload jsonb)
      JOIN accepted a ON a.i = u.i
      RETURNING "incomingId"
    ), chunks AS (
      SELECT "incomingId", (row_number() OVER (ORDER BY "incomingId") / 150)::int AS chunk FROM (SELECT DISTINCT "incomingId" FROM inserted) x
    ), notified AS (
      SELECT count(*) AS n FROM (
        SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'notification', 'keys', json_agg("incomingId"))::text) FROM chunks GROUP BY chunk
      ) x
    )
    SELECT req.i,
           CASE WHEN prior.i IS NOT NULL THEN CASE WHEN prior.same THEN 'replay' ELSE 'conflict' END
                WHEN EXISTS (SELECT 1 FROM accepted WHERE accepted.i = req.i) THEN 'accepted'
                WHEN NOT EXISTS (SELECT 1 FROM fresh WHERE fresh.i = req.i) THEN 'noFileGroup'
                ELSE 'raced' END AS outcome,
           prior.response
    FROM req LEFT JOIN prior ON prior.i = req.i
    WHERE (SELECT n FROM notified) >= 0 AND (SELECT count(*) FROM purged) >= 0
    ORDER BY req.i`);
  return rows.map((r) => (r.outcome === 'replay' ? { outcome: 'replay', response: r.response } : { outcome: r.outcome, response: null }));
}

/**
 * The common case (no Idempotency-Key, no file group: nothing to read or check) as the plain INSERT + pg_notify: the
 * same rows and announcement as acceptNotifications, with a plan PostgreSQL makes in a fraction of the time.
 */
async function insertOnly(db: PrismaClient, requests: AcceptRequest[]): Promise<AcceptOutcome[]> {
  const rows = requests.flatMap(({ units, key: _k, hash: _h, response: _r, ...r }) => units.map((u) => ({ ...r, ...u })));
  await statementsOf(db).rows(Prisma.sql`
    WITH inserted AS (
      INSERT INTO "Notification" (id, "incomingId", "systemId", channel, type, recipient, payload, "reportForm", "fileGroupId", status,
                                  flag, priority, "sendAfter", "sendBefore", "availableAt", attempts, "maxAttempts", "createTime", "updateTime")
      SELECT id, "incomingId", "systemId", channel, type, recipient, payload, "reportForm", NULL, 'PENDING',
             flag, priority, "sendAfter" AT TIME ZONE 'UTC', "sendBefore" AT TIME ZONE 'UTC', "availableAt" AT TIME ZONE 'UTC', 0,
             ${attemptsAllowed('u')}, "createTime" AT TIME ZONE 'UTC', "createTime" AT TIME ZONE 'UTC'
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS u(
        id uuid, "incomingId" uuid, "systemId" text, channel text, type text, recipient text, payload jsonb, "reportForm" jsonb,
        flag text, priority int, "sendAfter" timestamptz, "sendBefore" timestamptz, "availableAt" timestamptz, "maxAttempts" int,
        "createTime" timestamptz)
      RETURNING "incomingId"
    ), chunks AS (
      SELECT "incomingId", (row_number() OVER (ORDER BY "incomingId") / 150)::int AS chunk FROM (SELECT DISTINCT "incomingId" FROM inserted) x
    )
    SELECT count(*)::int AS n FROM (
      SELECT pg_notify(${EVENTS_CHANNEL}, json_build_object('topic', 'notification', 'keys', json_agg("incomingId"))::text) FROM chunks GROUP BY chunk
    ) x`);
  return requests.map(() => ({ outcome: 'accepted', response: null }));
}
