// A token bucket per API key, in this process's memory: each key may spend `perMinute` operations a minute,
// refilled continuously, with bursts up to `perMinute`.

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until one token is back (when refused). */
  retryAfterSeconds: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(key: string): RateDecision {
    if (this.perMinute <= 0) return { allowed: true, retryAfterSeconds: 0 };
    const now = this.now();
    const ratePerMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * ratePerMs);
    bucket.at = now;
    if (this.buckets.size > 100_000) this.buckets.clear(); // keys are few; this only bounds memory
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerMs / 1000)) };
  }
}
