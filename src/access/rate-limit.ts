import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../log.js';
import type { GatewayMetrics } from '../kit/metrics.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { createRateBucket } from '../db/sql/createRateBucket.js';
import { returnRateTokens } from '../db/sql/returnRateTokens.js';
import { takeRateLease, type RateLease } from '../db/sql/takeRateLease.js';

// A token bucket per API key: each key may spend `perMinute` operations a minute, refilled continuously, with
// bursts up to `perMinute`. The embedded database is one process and keeps the buckets in memory. On PostgreSQL the
// bucket lives in the database, so the limit holds across every gateway process; a process leases a share of a key's
// tokens at a time (src/db/sql/takeRateLease.ts) and spends them without a statement, gives back what it did not use
// on a background tick, and leases only what waiting operations need once the key nears its limit. When the bucket
// cannot be written (a read-only database after a failover, an outage) keys are limited per process instead, and the
// gateway says so (a warn line, gateway_rate_limit_degraded, gateway_rate_limit_local_decisions_total).

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until one token is back (when refused). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Synchronous when the answer is at hand (leased tokens, a local bucket); a promise while a lease is fetched. */
  take(key: string): RateDecision | Promise<RateDecision>;
  /** Stops the background tick and gives leased tokens back. */
  close(): Promise<void>;
}

const ALLOWED: RateDecision = Object.freeze({ allowed: true, retryAfterSeconds: 0 });

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

  take(key: string): RateDecision {
    if (this.perMinute <= 0) return ALLOWED;
    const now = this.now();
    const ratePerMs = this.perMinute / 60_000;
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size > 100_000) this.buckets.clear(); // keys are few; this only bounds memory
      bucket = { tokens: this.perMinute, at: now };
      this.buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * ratePerMs);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return ALLOWED;
    }
    return { allowed: false, retryAfterSeconds: retryAfter(bucket.tokens, ratePerMs * 1000) };
  }

  async close(): Promise<void> {}
}

/** How often leased tokens are looked at: those of a key unused since the last tick, or about to expire, go back. */
export const LEASE_TICK_MS = 250;
/** A lease beyond the waiting operations covers about this much of the key's recent demand in this process. */
export const LEASE_DEMAND_MS = 500;
/** The most tokens one lease asks for. */
export const MAX_LEASE = 100_000;
/** Below this lease size no lease is fetched ahead of need: near its limit a key is leased token by token. */
const PREFETCH_MIN_LEASE = 4;
/** While degraded, how often one operation's lease is tried again in the background. */
const DEGRADED_RETRY_MS = 2000;

/** Tokens a lease asks for: what waiting operations need, or the demand of the last LEASE_DEMAND_MS if more. */
export function leaseWant(spentSinceLastLease: number, msSinceLastLease: number, need: number): number {
  const demand = Math.ceil((spentSinceLastLease * LEASE_DEMAND_MS) / Math.max(msSinceLastLease, 1));
  return Math.max(need, Math.min(MAX_LEASE, demand));
}

interface Held {
  tokens: number;
  /** By this process's clock (the `now` it is given); never later than the lease's end by the database's clock. */
  expiresAt: number;
}

/**
 * The tokens one process holds for one key: at most two leases (a new one may arrive while the last one's tokens are
 * still being spent), the older spent first. Pure bookkeeping, no I/O; `now` is a monotonic clock in milliseconds.
 */
export class KeyLease {
  private first: Held = { tokens: 0, expiresAt: 0 };
  private second: Held = { tokens: 0, expiresAt: 0 };
  /** Spent since the last tick (a key unused for a whole tick gives its tokens back). */
  private used = false;
  /** The size of the last grant (how much demand this process saw). */
  lastGrant = 0;
  spentSinceLease = 0;
  leasedAt: number;

  constructor(now: number) {
    this.leasedAt = now;
  }

  /** Spends one token when one is held and unexpired. */
  spend(now: number): boolean {
    let held = this.first;
    if (held.tokens < 1 || now >= held.expiresAt) {
      held = this.second;
      if (held.tokens < 1 || now >= held.expiresAt) return false;
      this.second = this.first;
      this.first = held;
      this.second.tokens = 0;
    }
    held.tokens -= 1;
    this.spentSinceLease++;
    this.used = true;
    return true;
  }

  /** Tokens held now (unexpired). */
  held(now: number): number {
    return (now < this.first.expiresAt ? this.first.tokens : 0) + (now < this.second.expiresAt ? this.second.tokens : 0);
  }

  /** True when a busy key runs low, so the next lease is fetched before an operation has to wait for it. */
  runsLow(now: number): boolean {
    return this.lastGrant >= PREFETCH_MIN_LEASE && this.held(now) <= this.lastGrant / 4;
  }

  /** A lease is sent: demand is counted from here. */
  leasing(now: number): void {
    this.spentSinceLease = 0;
    this.leasedAt = now;
  }

  /** Adds a grant that ends at `expiresAt`; tokens merged into an earlier lease take its (earlier, so safe) end. */
  add(tokens: number, expiresAt: number, now: number): void {
    this.lastGrant = tokens;
    if (tokens < 1) return;
    if (this.first.tokens < 1 || now >= this.first.expiresAt) this.first = { tokens: 0, expiresAt: 0 };
    if (this.second.tokens < 1 || now >= this.second.expiresAt) this.second = { tokens: 0, expiresAt: 0 };
    for (const held of [this.first, this.second]) {
      if (held.tokens === 0) {
        held.tokens = tokens;
        held.expiresAt = expiresAt;
        return this.order();
      }
      if (held.expiresAt === expiresAt) {
        held.tokens += tokens;
        return;
      }
    }
    this.second.tokens += tokens;
    this.second.expiresAt = Math.min(this.second.expiresAt, expiresAt);
    this.order();
  }

  private order(): void {
    const first = this.first;
    if (first.tokens === 0 || (this.second.tokens > 0 && this.second.expiresAt < first.expiresAt)) {
      this.first = this.second;
      this.second = first;
    }
  }

  /**
   * Takes out the tokens to give back at a tick: all of them when the key was not used since the last tick, else those
   * of a lease that ends within `horizonMs` (they would expire unspent). Expired tokens are dropped (lost until the
   * bucket refills). Starts the next tick's count of use.
   */
  takeReturns(now: number, horizonMs: number): number {
    const idle = !this.used;
    this.used = false;
    let count = 0;
    for (const held of [this.first, this.second]) {
      if (now >= held.expiresAt) held.tokens = 0;
      else if (idle || held.expiresAt - now < horizonMs) {
        count += held.tokens;
        held.tokens = 0;
      }
    }
    return count;
  }

  /** Nothing held, nothing spent since the last tick: the key's state may be forgotten. */
  forgettable(now: number): boolean {
    return !this.used && this.held(now) === 0;
  }
}

export type DegradedReason = 'read_only' | 'unavailable' | 'error';

/** Why a bucket statement failed: a read-only database (SQLSTATE 25006), an outage, or something else. */
export function faultReason(error: unknown): DegradedReason {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const { code, meta } = e as { code?: unknown; meta?: { driverAdapterError?: { cause?: { code?: unknown; originalCode?: unknown; kind?: unknown } } } };
    const cause = meta?.driverAdapterError?.cause;
    if (code === '25006' || cause?.code === '25006' || cause?.originalCode === '25006') return 'read_only';
  }
  return isDatabaseUnavailable(error) ? 'unavailable' : 'error';
}

interface KeyState {
  lease: KeyLease;
  waiters: ((decision: RateDecision) => void)[];
  fetching: boolean;
}

export interface LeasedRateLimiterOptions {
  log?: Logger;
  metrics?: GatewayMetrics;
  /** A monotonic clock in milliseconds. */
  now?: () => number;
}

export class LeasedRateLimiter implements RateLimiter {
  private readonly keys = new Map<string, KeyState>();
  private readonly perSecond: number;
  private readonly now: () => number;
  /** Per-process buckets while the database bucket cannot be written. */
  private readonly local: MemoryRateLimiter;
  private degraded: { reason: DegradedReason; retryAt: number } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: PrismaClient,
    private readonly perMinute: number,
    private readonly options: LeasedRateLimiterOptions = {},
  ) {
    this.perSecond = perMinute / 60;
    this.now = options.now ?? (() => performance.now());
    this.local = new MemoryRateLimiter(perMinute, this.now);
  }

  take(key: string): RateDecision | Promise<RateDecision> {
    if (this.perMinute <= 0) return ALLOWED;
    const now = this.now();
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { lease: new KeyLease(now), waiters: [], fetching: false };
      this.keys.set(key, state);
      if (!this.closed) this.timer ??= setInterval(() => void this.tick(), LEASE_TICK_MS).unref();
    }
    if (state.lease.spend(now)) {
      if (!state.fetching && !this.degraded && state.lease.runsLow(now)) this.fetch(key, state);
      return ALLOWED;
    }
    if (this.degraded || this.closed) {
      if (this.degraded && now >= this.degraded.retryAt && !state.fetching) {
        this.degraded.retryAt = now + DEGRADED_RETRY_MS;
        this.fetch(key, state); // a probe: this operation is still decided here
      }
      return this.decideLocally(key);
    }
    const waiting = state;
    return new Promise<RateDecision>((resolve) => {
      waiting.waiters.push(resolve);
      if (!waiting.fetching) this.fetch(key, waiting);
    });
  }

  private decideLocally(key: string): RateDecision {
    this.options.metrics?.rateLimitLocal.inc({ reason: this.degraded?.reason ?? 'closing' });
    return this.local.take(key);
  }

  /** One lease at a time per key: operations arriving meanwhile wait for it, and lease again if it fell short. */
  private fetch(key: string, state: KeyState): void {
    state.fetching = true;
    void this.leaseLoop(key, state);
  }

  private async leaseLoop(key: string, state: KeyState): Promise<void> {
    try {
      do {
        const sentAt = this.now();
        const need = state.waiters.length;
        const want = leaseWant(state.lease.spentSinceLease, sentAt - state.lease.leasedAt, need);
        state.lease.leasing(sentAt);
        let lease: RateLease | undefined;
        try {
          lease = await takeRateLease(this.db, key, this.perMinute, this.perSecond, need, want);
          if (lease === undefined) {
            await createRateBucket(this.db, key, this.perMinute);
            lease = await takeRateLease(this.db, key, this.perMinute, this.perSecond, need, want);
          }
          if (lease === undefined) throw new Error(`the rate bucket of key ${key} is missing right after it was made`);
        } catch (error) {
          this.degrade(error);
          for (const resolve of state.waiters.splice(0)) resolve(this.decideLocally(key));
          return;
        }
        this.recover();
        const now = this.now();
        state.lease.add(lease.granted, sentAt + lease.expiresInMs, now);
        // The first `need` waiters were counted in this lease: refused when it fell short (the bucket ran dry). Later
        // arrivals get what is left, or lease again.
        const waiters = state.waiters;
        let i = 0;
        for (; i < waiters.length; i++) {
          if (state.lease.spend(now)) waiters[i]!({ allowed: true, retryAfterSeconds: 0 });
          else if (i < need) waiters[i]!({ allowed: false, retryAfterSeconds: retryAfter(lease.tokens, this.perSecond) });
          else break;
        }
        waiters.splice(0, i);
      } while (state.waiters.length > 0 && !this.closed);
      for (const resolve of state.waiters.splice(0)) resolve(this.decideLocally(key));
    } finally {
      // In the same turn as the last waiter's answer: an operation continuing from it sees no lease in flight.
      state.fetching = false;
    }
  }

  private degrade(error: unknown): void {
    const reason = faultReason(error);
    const retryAt = this.now() + DEGRADED_RETRY_MS;
    if (this.degraded) {
      this.degraded = { reason, retryAt };
      return;
    }
    this.degraded = { reason, retryAt };
    this.options.metrics?.rateLimitDegraded.set(1);
    const line = { reason, err: error, perProcessLimit: this.perMinute };
    const message =
      'rate limit degraded: the database bucket cannot be written (' +
      (reason === 'read_only' ? 'read-only database' : reason === 'unavailable' ? 'database unreachable' : 'statement failed') +
      '); each process now allows RATE_LIMIT_PER_MINUTE per key on its own until it can';
    if (reason === 'error') this.options.log?.error(line, message);
    else this.options.log?.warn(line, message);
  }

  private recover(): void {
    if (!this.degraded) return;
    this.degraded = undefined;
    this.options.metrics?.rateLimitDegraded.set(0);
    this.options.log?.info('rate limit restored: the database bucket is written again; the limit holds across processes');
  }

  /** Gives back tokens of keys unused since the last tick and of leases about to end; forgets idle keys. */
  private async tick(): Promise<void> {
    const now = this.now();
    const returns: Promise<void>[] = [];
    for (const [key, state] of this.keys) {
      if (state.fetching) continue;
      if (state.lease.forgettable(now)) {
        this.keys.delete(key);
        continue;
      }
      if (this.degraded) continue; // what is held is spent until it ends: nothing can be given back now
      const count = state.lease.takeReturns(now, 2 * LEASE_TICK_MS);
      if (count > 0) returns.push(this.giveBack(key, count));
    }
    await Promise.all(returns);
  }

  private giveBack(key: string, count: number): Promise<void> {
    return returnRateTokens(this.db, key, count, this.perMinute).catch((error: unknown) => this.degrade(error));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const now = this.now();
    const returns: Promise<void>[] = [];
    for (const [key, state] of this.keys) {
      const count = state.fetching ? 0 : state.lease.takeReturns(now, Infinity);
      if (count > 0 && !this.degraded) returns.push(this.giveBack(key, count));
    }
    await Promise.all(returns);
  }
}

/** The limiter a database kind calls for. */
export function createRateLimiter(db: PrismaClient, kind: 'postgres' | 'pglite', perMinute: number, options: LeasedRateLimiterOptions = {}): RateLimiter {
  return kind === 'postgres' ? new LeasedRateLimiter(db, perMinute, options) : new MemoryRateLimiter(perMinute);
}
