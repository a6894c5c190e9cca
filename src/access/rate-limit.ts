import type { PrismaClient } from '../generated/prisma/client.js';
import { takeRateToken } from '../db/sql/takeRateToken.js';

// A token bucket per API key: each key may spend `perMinute` operations a minute, refilled continuously, with
// bursts up to `perMinute`. On PostgreSQL the buckets live in the database (one statement per operation), so the
// limit holds across every gateway process; the embedded database is one process, and keeps them in memory.

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until one token is back (when refused). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  take(key: string): Promise<RateDecision>;
}

const ALLOWED: RateDecision = { allowed: true, retryAfterSeconds: 0 };

/** Seconds until the bucket holds one token again. */
function retryAfter(tokens: number, perSecond: number): number {
  return Math.max(1, Math.ceil((1 - tokens) / perSecond));
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  async take(key: string): Promise<RateDecision> {
    if (this.perMinute <= 0) return ALLOWED;
    const now = this.now();
    const ratePerMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * ratePerMs);
    bucket.at = now;
    if (this.buckets.size > 100_000) this.buckets.clear(); // keys are few; this only bounds memory
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return ALLOWED;
    }
    return { allowed: false, retryAfterSeconds: retryAfter(bucket.tokens, ratePerMs * 1000) };
  }
}

export class PostgresRateLimiter implements RateLimiter {
  constructor(
    private readonly db: PrismaClient,
    private readonly perMinute: number,
  ) {}

  async take(key: string): Promise<RateDecision> {
    if (this.perMinute <= 0) return ALLOWED;
    const perSecond = this.perMinute / 60;
    const { granted, tokens } = await takeRateToken(this.db, key, this.perMinute, perSecond);
    return granted ? ALLOWED : { allowed: false, retryAfterSeconds: retryAfter(tokens, perSecond) };
  }
}

/** The limiter a database kind calls for. */
export function createRateLimiter(db: PrismaClient, kind: 'postgres' | 'pglite', perMinute: number): RateLimiter {
  return kind === 'postgres' ? new PostgresRateLimiter(db, perMinute) : new MemoryRateLimiter(perMinute);
}
