import type { PrismaClient } from '../generated/prisma/client.js';
import { claimDueJobs } from '../db/sql/claimDueJobs.js';
import { fireOccurrences, type FiredInstance, type Occurrence } from '../db/sql/fireOccurrences.js';
import { nextOccurrence } from './cron.js';
import type { RunnableInstance } from './executor.js';
import type { StoredTarget } from './scheduler-rules.js';

// One scheduling round: claim due jobs in one statement, decide each occurrence (on time, or the misfire rule),
// and fire them in one statement, all in one transaction.

export interface FiringOptions {
  batchSize: number;
  /** An occurrence older than this at firing time is a misfire (Quartz's misfireThreshold). */
  misfireThresholdMs: number;
}

export interface FiringRound {
  claimed: number;
  /** The database's now() the round decided against (epoch ms), or null when nothing was due. */
  nowMs: number | null;
  /** Instances to run in this process (RUNNING, leased to it). */
  runnable: RunnableInstance[];
  fired: FiredInstance[];
}

/**
 * Quartz's misfire rules: within the threshold an occurrence fires normally (late); beyond it FIRE_ONCE
 * (MISFIRE_INSTRUCTION_FIRE_ONCE_NOW) fires one instance now, marked FIRED_LATE, and SKIP
 * (MISFIRE_INSTRUCTION_DO_NOTHING) records one SKIPPED instance; either way the remaining missed occurrences are
 * dropped and the job continues from the first occurrence after now.
 */
export function decideOccurrence(job: { name: string; schedule: string; timeZone: string; misfirePolicy: 'FIRE_ONCE' | 'SKIP'; nextRunMs: number }, now: Date, thresholdMs: number): Occurrence {
  const occurrence = new Date(job.nextRunMs);
  const misfired = now.getTime() - job.nextRunMs > thresholdMs;
  const next = nextOccurrence(job.schedule, job.timeZone, misfired ? now : occurrence);
  return {
    name: job.name,
    occurrence: occurrence.toISOString(),
    next: next?.toISOString() ?? null,
    misfire: misfired ? (job.misfirePolicy === 'SKIP' ? 'SKIPPED' : 'FIRED_LATE') : null,
  };
}

/** One round, decided against the database's clock (the due jobs' claim reads its now()). */
export async function fireDueJobs(db: PrismaClient, me: string, options: FiringOptions): Promise<FiringRound> {
  const { claimed, fired, nowMs } = await db.$transaction(
    async (tx) => {
      const due = await claimDueJobs(tx, options.batchSize);
      if (due.length === 0) return { claimed: 0, fired: [] as FiredInstance[], nowMs: null };
      const now = new Date(due[0]!.nowMs);
      const occurrences = due.map((job) => decideOccurrence(job, now, options.misfireThresholdMs));
      return { claimed: due.length, fired: await fireOccurrences(tx, me, now, occurrences), nowMs: now.getTime() };
    },
    { timeout: 30_000, maxWait: 30_000 },
  );
  const runnable = fired
    .filter((f) => f.status === 'RUNNING')
    .map((f) => ({
      id: f.id,
      jobName: f.jobName,
      scheduledTime: new Date(f.scheduledMs),
      target: f.target as StoredTarget,
      retryCount: f.retryCount,
      minBackoffMs: f.minBackoffMs,
      maxBackoffMs: f.maxBackoffMs,
      maxDoublings: f.maxDoublings,
      timeoutSeconds: f.timeoutSeconds,
    }));
  return { claimed, nowMs, runnable, fired };
}
