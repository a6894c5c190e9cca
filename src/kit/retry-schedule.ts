import { z } from 'zod';

// How long a notification waits before each retry. Webhook services retry for hours to days (Svix: 5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h, 10 h; Stripe: up to 3 days), so that a receiver's outage of minutes or hours loses nothing;
// the gateway's default is Svix's schedule. A schedule is a list of waits, the first before the second attempt; once
// it is spent the unit is FAILED. Each wait is jittered (src/kit/jitter.ts), so that what failed together (an outage)
// does not retry together. A system may set its own, for one channel or for all of its channels
// (setRetrySchedule); DELIVERY_RETRY_SCHEDULE is the default.

/** Svix's schedule: a receiver may be away for a day. */
export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';
/** At most this many retries in one schedule. */
export const MAX_RETRY_STEPS = 50;
/** The longest single wait: a week (and within what a PostgreSQL int holds in milliseconds). */
export const MAX_RETRY_STEP_MS = 7 * 24 * 3_600_000;

const UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNITS_MS;
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/** Milliseconds of one duration such as `500ms`, `5s`, `5m`, `2h` or `1d`; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * UNITS_MS[match[2] as Unit];
}

/** The shortest text for a wait: `5s`, `30m`, `2h`, `1500ms`. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) if (ms >= UNITS_MS[unit] && ms % UNITS_MS[unit] === 0) return `${ms / UNITS_MS[unit]}${unit}`;
  return `${ms}ms`;
}

const step = z
  .string({ message: 'must be a duration such as "5s", "5m", "2h"' })
  .transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || ms < 1 || ms > MAX_RETRY_STEP_MS) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not a wait of 1ms to 7d written as a number and ms, s, m, h or d (for example 5s, 30m, 2h)` });
      return z.NEVER;
    }
    return ms;
  });

/** A schedule as a list of durations (the GraphQL argument): its waits in milliseconds. Empty: no retry. */
export const retrySteps = z.array(step, { message: 'must be a list of durations such as ["5s", "5m", "2h"]' }).max(MAX_RETRY_STEPS, `at most ${MAX_RETRY_STEPS} waits`);

/** A schedule written as DELIVERY_RETRY_SCHEDULE is: durations separated by commas (or nothing: no retry). */
export const retryScheduleText = z.string().transform((text, ctx) => {
  const parsed = retrySteps.safeParse(text.split(',').map((s) => s.trim()).filter(Boolean));
  if (!parsed.success) {
    ctx.addIssue({ code: 'custom', message: parsed.error.issues.map((i) => i.message).join('; ') });
    return z.NEVER;
  }
  return parsed.data;
});
