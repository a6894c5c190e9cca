import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyLease, LEASE_DEMAND_MS, LeasedRateLimiter, MAX_LEASE, faultReason, leaseWant } from '../src/access/rate-limit.js';
import { createApiKey } from '../src/access/api-keys.js';
import { startGateway, type Gateway } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/client.js';
import { applyMigrations } from '../src/db/migrations.js';
import { createRateBucket } from '../src/db/sql/createRateBucket.js';
import { LEASE_PERIOD_MS, takeRateLease } from '../src/db/sql/takeRateLease.js';
import { createMetrics } from '../src/runtime/metrics.js';
import { ADMIN_URL, freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { NO_WORKERS, rpc } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';

// Rate limit leases: the process side's arithmetic (pure), the lease statement's arithmetic (on PostgreSQL), no
// bucket write per operation in the steady state, and reads that keep answering on a read-only database.

describe('lease arithmetic of one process (pure)', () => {
  it.each([
    { spent: 0, ms: 1000, need: 1, want: 1, why: 'no demand seen: what the waiting operations need' },
    { spent: 0, ms: 1000, need: 0, want: 0, why: 'a prefetch with no demand asks nothing' },
    { spent: 100, ms: 1000, need: 1, want: 50, why: '100 a second: half a second of demand' },
    { spent: 100, ms: 10, need: 0, want: 5000, why: '10,000 a second' },
    { spent: 10, ms: 0, need: 3, want: 5000, why: 'no time passed counts as 1 ms' },
    { spent: 1e9, ms: 1, need: 0, want: MAX_LEASE, why: 'capped' },
    { spent: 1, ms: 60_000, need: 7, want: 7, why: 'waiting operations beat a low demand' },
  ])('leaseWant($spent spent in $ms ms, need $need) = $want: $why', ({ spent, ms, need, want }) => {
    expect(LEASE_DEMAND_MS).toBe(500);
    expect(leaseWant(spent, ms, need)).toBe(want);
  });

  type Step = ['add', number, number] | ['spend', boolean] | ['held', number] | ['returns', number, number] | ['low', boolean] | ['at', number];
  it.each<{ name: string; steps: Step[] }>([
    { name: 'nothing held: nothing to spend', steps: [['spend', false], ['held', 0]] },
    { name: 'a grant of 3 spends 3 times', steps: [['add', 3, 1000], ['spend', true], ['spend', true], ['spend', true], ['spend', false]] },
    { name: 'expired tokens are not spent', steps: [['add', 5, 100], ['at', 100], ['spend', false], ['held', 0]] },
    { name: 'a grant of 0 adds nothing', steps: [['add', 0, 1000], ['spend', false]] },
    {
      name: 'the older lease is spent first, the later one after it expires',
      steps: [['add', 1, 1000], ['add', 2, 2000], ['held', 3], ['spend', true], ['held', 2], ['at', 1500], ['held', 2], ['spend', true], ['spend', true], ['spend', false]],
    },
    { name: 'grants ending together merge', steps: [['add', 3, 1000], ['add', 4, 1000], ['held', 7], ['at', 999], ['held', 7], ['at', 1000], ['held', 0]] },
    {
      name: 'a third lease merges into the second and ends with it (earlier: safe)',
      steps: [['add', 1, 1000], ['add', 1, 2000], ['add', 1, 3000], ['held', 3], ['at', 1500], ['held', 2], ['at', 2000], ['held', 0]],
    },
    { name: 'a key unused for a tick gives back everything', steps: [['add', 10, 2000], ['returns', 250, 10], ['held', 0]] },
    {
      name: 'a used key keeps a lease far from its end, gives back one about to end',
      steps: [['add', 10, 2000], ['spend', true], ['returns', 500, 0], ['held', 9], ['spend', true], ['at', 1600], ['returns', 500, 8], ['held', 0]],
    },
    { name: 'expired tokens are dropped, not given back', steps: [['add', 10, 1000], ['spend', true], ['at', 1000], ['returns', 500, 0]] },
    { name: 'a busy key runs low at a quarter of its last grant', steps: [['add', 40, 5000], ['low', false], ...Array.from({ length: 29 }, (): Step => ['spend', true]), ['low', false], ['spend', true], ['low', true]] },
    { name: 'token-by-token leases (near the limit) are never fetched ahead', steps: [['add', 2, 5000], ['spend', true], ['spend', true], ['low', false]] },
  ])('KeyLease: $name', ({ steps }) => {
    let now = 0;
    const lease = new KeyLease(now);
    for (const [i, step] of steps.entries()) {
      const where = `step ${i}: ${JSON.stringify(step)}`;
      if (step[0] === 'at') now = step[1];
      else if (step[0] === 'add') lease.add(step[1], step[2], now);
      else if (step[0] === 'spend') expect(lease.spend(now), where).toBe(step[1]);
      else if (step[0] === 'held') expect(lease.held(now), where).toBe(step[1]);
      else if (step[0] === 'low') expect(lease.runsLow(now), where).toBe(step[1]);
      else expect(lease.takeReturns(now, step[1]), where).toBe(step[2]);
    }
  });

  it('names the fault of a bucket statement: read-only (25006, direct or through Prisma), outage, other', () => {
    expect(faultReason(Object.assign(new Error('cannot execute UPDATE in a read-only transaction'), { code: '25006' }))).toBe('read_only');
    expect(faultReason({ code: 'P2010', meta: { driverAdapterError: { cause: { originalCode: '25006' } } } })).toBe('read_only');
    expect(faultReason(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }))).toBe('unavailable');
    expect(faultReason(new Error('relation "RateBucket" does not exist'))).toBe('error');
  });
});

describe('the lease statement on PostgreSQL (capacity 600, 10 a second)', () => {
  let fresh: FreshDatabase;
  let database: Database;
  let admin: pg.Client;
  beforeAll(async () => {
    fresh = await freshDatabase('postgres');
    database = await openDatabase({ databaseUrl: fresh.url!, dataDir: 'unused' });
    await applyMigrations(database.adapterFactory);
    admin = new pg.Client({ connectionString: fresh.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await database?.close();
    await fresh?.drop();
  });

  // Each case sets the bucket's row (tokens, seconds since its last update, tokens leased this period and the one
  // before, or two periods ago) and leases once.
  it.each([
    { name: 'a full bucket, one waiting operation', tokens: 600, need: 1, want: 1, granted: 1, left: 599 },
    { name: 'a full bucket leases an eighth of it at most', tokens: 600, need: 0, want: 200, granted: 75, left: 525 },
    { name: 'what is wanted, when less than the share', tokens: 600, need: 0, want: 30, granted: 30, left: 570 },
    { name: 'waiting operations beat the share', tokens: 600, need: 100, want: 100, granted: 100, left: 500 },
    { name: 'near the limit the lease shrinks to what is waiting', tokens: 5, need: 1, want: 50, granted: 1, left: 4 },
    { name: 'never more than the bucket holds', tokens: 3, need: 10, want: 10, granted: 3, left: 0 },
    { name: 'less than one token: nothing', tokens: 0.5, need: 3, want: 3, granted: 0, left: 0.5 },
    { name: 'refill: 6 s gave 60 tokens', tokens: 0, ago: 6, need: 1, want: 1, granted: 1, left: 59 },
    { name: 'refill stops at capacity less what is out on lease this period', tokens: 0, ago: 120, leasedNow: 100, need: 1, want: 1, granted: 1, left: 499 },
    { name: '... and the period before', tokens: 0, ago: 120, leasedNow: 100, leasedPrev: 50, need: 1, want: 1, granted: 1, left: 449 },
    { name: 'leases of two periods ago have ended', tokens: 0, ago: 120, leasedNow: 100, periodsAgo: 2, need: 1, want: 1, granted: 1, left: 599 },
    { name: 'given-back tokens above that cap stay', tokens: 550, ago: 120, leasedNow: 100, need: 1, want: 1, granted: 1, left: 549 },
  ])('$name', async ({ tokens, ago = 0, leasedNow = 0, leasedPrev = 0, periodsAgo = 0, need, want, granted, left }) => {
    const key = `k-${Math.random()}`;
    await createRateBucket(database.prisma, key, 600);
    await admin.query(
      `UPDATE "RateBucket" SET tokens = $2, "updatedAt" = (clock_timestamp() AT TIME ZONE 'UTC') - make_interval(secs => $3),
         "leasedEpoch" = floor(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 / $4)::bigint - $5, "leasedNow" = $6, "leasedPrev" = $7 WHERE key = $1`,
      [key, tokens, ago, LEASE_PERIOD_MS, periodsAgo, leasedNow, leasedPrev],
    );
    const lease = (await takeRateLease(database.prisma, key, 600, 10, need, want))!;
    expect(lease.granted).toBe(granted);
    expect(Math.abs(lease.tokens - left)).toBeLessThan(0.5); // milliseconds between the UPDATE and the lease refill a little
    expect(lease.expiresInMs).toBeGreaterThan(LEASE_PERIOD_MS);
    expect(lease.expiresInMs).toBeLessThanOrEqual(2 * LEASE_PERIOD_MS);
    const [row] = (await admin.query(`SELECT "leasedNow" + "leasedPrev" AS leased FROM "RateBucket" WHERE key = $1`, [key])).rows;
    expect(row.leased).toBeGreaterThanOrEqual(granted); // counted against the refill until it ends
  });

  it('50 operations of one key arriving together share leases: 3 bucket writes (made, one token, the other 49), none refused', async () => {
    await admin.query(`
      CREATE TABLE bucket_writes (n int NOT NULL);
      INSERT INTO bucket_writes VALUES (0);
      CREATE FUNCTION count_bucket_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE bucket_writes SET n = n + 1; RETURN NULL; END $$;
      CREATE TRIGGER count_bucket_writes AFTER INSERT OR UPDATE ON "RateBucket" FOR EACH ROW EXECUTE FUNCTION count_bucket_write();`);
    const limiter = new LeasedRateLimiter(database.prisma, 600);
    try {
      const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.take('together')));
      expect(decisions).toEqual(Array(50).fill({ allowed: true, retryAfterSeconds: 0 }));
      expect((await admin.query('SELECT n FROM bucket_writes')).rows[0].n).toBe(3);
    } finally {
      await limiter.close();
      await admin.query('DROP TRIGGER count_bucket_writes ON "RateBucket"');
    }
  });

  it('a key without a bucket answers no row (the limiter then makes it, full)', async () => {
    expect(await takeRateLease(database.prisma, 'nobody', 600, 10, 1, 1)).toBeUndefined();
  });
});

/** Log lines a gateway writes, parsed. */
function lineSink(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

describe('no bucket write per operation in the steady state (PostgreSQL)', () => {
  let fresh: FreshDatabase;
  let gateway: Gateway;
  let admin: pg.Client;
  beforeAll(async () => {
    fresh = await freshDatabase('postgres');
    gateway = await startGateway(loadConfig({ ...fresh.env, PORT: '0', HOST: '127.0.0.1', AUTH: 'on', RATE_LIMIT_PER_MINUTE: '1000000', ...NO_WORKERS }), { log: pino({ level: 'silent' }) });
    admin = new pg.Client({ connectionString: fresh.url });
    await admin.connect();
    // Counts every write to the buckets, as it happens (statistics views lag).
    await admin.query(`
      CREATE TABLE bucket_writes (n int NOT NULL);
      INSERT INTO bucket_writes VALUES (0);
      CREATE FUNCTION count_bucket_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE bucket_writes SET n = n + 1; RETURN NULL; END $$;
      CREATE TRIGGER count_bucket_writes AFTER INSERT OR UPDATE ON "RateBucket" FOR EACH ROW EXECUTE FUNCTION count_bucket_write();`);
  });
  afterAll(async () => {
    await admin?.end();
    await gateway?.close();
    await fresh?.drop();
  });

  it('400 keyed reads, 8 at a time, write the key\'s bucket a handful of times, not 400', async () => {
    const { key } = await createApiKey(gateway.services.db, { name: 'busy', scopes: ['queues:read'] });
    const headers = { authorization: `Bearer ${key}` };
    const statuses: number[] = [];
    const client = async () => {
      for (let i = 0; i < 50; i++) statuses.push((await rpc(gateway.url, 'listQueues', {}, {}, headers)).status);
    };
    await Promise.all(Array.from({ length: 8 }, client));
    expect(statuses.filter((s) => s === 200).length).toBe(400);
    const writes = (await admin.query('SELECT n FROM bucket_writes')).rows[0].n as number;
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThanOrEqual(40); // one per ~10 operations at most; the old limiter wrote 400
  }, 60_000);
});

describe('a read-only database (as after a failover to a replica): keyed reads keep answering', () => {
  let fresh: FreshDatabase;
  let gateway: Gateway;
  const sink = lineSink();
  let key: string;
  beforeAll(async () => {
    fresh = await freshDatabase('postgres');
    const env = { ...fresh.env, PORT: '0', HOST: '127.0.0.1', AUTH: 'on', RATE_LIMIT_PER_MINUTE: '30', ...NO_WORKERS };
    // A first gateway migrates and makes the key; the database turns read-only; the gateway under test starts on it.
    const first = await startGateway(loadConfig(env), { log: pino({ level: 'silent' }) });
    key = (await createApiKey(first.services.db, { name: 'reader', scopes: ['queues:read'] })).key;
    await first.close();
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`ALTER DATABASE "${new URL(fresh.url!).pathname.slice(1)}" SET default_transaction_read_only = on`);
    await admin.end();
    gateway = await startGateway(loadConfig(env), { log: pino({ level: 'info' }, sink.stream) });
  });
  afterAll(async () => {
    await gateway?.close();
    await fresh?.drop();
  });

  it('reads with a key answer 200 up to the limit, kept per process; a warn line and the metrics say the limit is degraded', async () => {
    const headers = { authorization: `Bearer ${key}` };
    const statuses: number[] = [];
    for (let i = 0; i < 33; i++) statuses.push((await rpc(gateway.url, 'listQueues', {}, {}, headers)).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(200));
    expect(statuses.slice(30)).toEqual([429, 429, 429]);
    expect(sink.lines).toContainEqual(expect.objectContaining({ level: 40, reason: 'read_only', msg: expect.stringMatching(/^rate limit degraded: .*read-only/) }));
    const metrics = await gateway.services.metrics.registry.metrics();
    expect(metrics).toMatch(/^gateway_rate_limit_degraded 1$/m);
    expect(metrics).toMatch(/^gateway_rate_limit_local_decisions_total\{reason="read_only"\} 33$/m);
  }, 60_000);
});

describe('a database outage while a process holds leased tokens', () => {
  let fresh: FreshDatabase;
  let direct: Database;
  let proxied: Database;
  let proxy: TcpProxy;
  beforeAll(async () => {
    fresh = await freshDatabase('postgres');
    direct = await openDatabase({ databaseUrl: fresh.url!, dataDir: 'unused' });
    await applyMigrations(direct.adapterFactory);
    const url = new URL(fresh.url!);
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.port = String(proxy.port);
    proxied = await openDatabase({ databaseUrl: url.toString(), dataDir: 'unused', connectTimeoutMs: 1000 });
  });
  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await proxied?.close();
    await direct?.close();
    await proxy?.close();
    await fresh?.drop();
  });

  it('spends the lease it holds, then limits per process (said in a warn line and the metrics), and returns to the shared bucket', async () => {
    const sink = lineSink();
    const log = pino({ level: 'info' }, sink.stream);
    const metrics = createMetrics(proxied.prisma, log);
    const limiter = new LeasedRateLimiter(proxied.prisma, 600, { log, metrics });
    try {
      expect(await limiter.take('k')).toEqual({ allowed: true, retryAfterSeconds: 0 }); // a lease of one
      expect(await limiter.take('k')).toEqual({ allowed: true, retryAfterSeconds: 0 }); // demand seen: a lease of 75
      await proxy.cut();
      // The leased tokens answer at once, without the database (synchronously: no promise). How many are held depends
      // on the demand the limiter saw and on the lease not having expired meanwhile, which a loaded host can stretch.
      const first = limiter.take('k');
      expect(first).toEqual({ allowed: true, retryAfterSeconds: 0 });
      const held = await Promise.all(Array.from({ length: 19 }, () => limiter.take('k')));
      expect(held).toEqual(Array(19).fill({ allowed: true, retryAfterSeconds: 0 }));
      // Spent down to a quarter, the next lease fails: degraded, and every key is limited per process.
      for (let i = 0; i < 60; i++) expect(await limiter.take('k')).toEqual({ allowed: true, retryAfterSeconds: 0 });
      await eventually(async () => sink.lines.some((l) => l.msg && String(l.msg).startsWith('rate limit degraded')), 8000, 20);
      expect(sink.lines).toContainEqual(expect.objectContaining({ level: 40, reason: 'unavailable' }));
      expect(await limiter.take('other')).toEqual({ allowed: true, retryAfterSeconds: 0 });
      expect(await metrics.registry.getSingleMetricAsString('gateway_rate_limit_degraded')).toMatch(/^gateway_rate_limit_degraded 1$/m);
      expect(await metrics.registry.getSingleMetricAsString('gateway_rate_limit_local_decisions_total')).toMatch(/reason="unavailable"\} [1-9]/);
      await proxy.restore();
      // A background lease every 2 s tries the database again.
      await eventually(
        async () => {
          await limiter.take('k');
          return sink.lines.some((l) => l.msg === 'rate limit restored: the database bucket is written again; the limit holds across processes');
        },
        15_000,
        200,
      );
      expect(await metrics.registry.getSingleMetricAsString('gateway_rate_limit_degraded')).toMatch(/^gateway_rate_limit_degraded 0$/m);
    } finally {
      await limiter.close();
    }
  }, 60_000);
});
