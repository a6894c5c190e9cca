import type { Config } from '../config.js';
import { databaseOptions, openDatabase, type Database } from '../db/client.js';
import { prepareDatabase } from '../db/startup.js';
import { startEventBus, type EventBus } from '../events/bus.js';
import type { AppServices } from '../services.js';
import type { Logger } from '../log.js';
import type { Worker } from '../runtime/types.js';
import { createWorkers } from '../runtime/workers.js';
import { seedDemoData } from '../identity/demo.js';
import { CmsVerifierPool } from '../signatures/pool.js';
import { TrustStore } from '../signatures/trust.js';
import { createJobExecutor } from '../scheduler/executor.js';
import { refuseDeleteWhileRunning } from '../tasks/tasks.js';
import { createSchedulerTaskCreator } from '../tasks/scheduler-task-creator.js';
import { createKeyVerifier, liveKeyIds } from '../access/api-keys.js';
import { createCredentialWatch } from '../access/credential-watch.js';
import { createTokenVerifier, type TokenSettings } from '../access/bearer-tokens.js';
import { createRateLimiter } from '../access/rate-limit.js';
import { createMetrics } from '../runtime/metrics.js';
import { createLoopRegistry } from '../kit/supervised-loop.js';
import { faultBackoff } from '../kit/backoff.js';
import { untilDeadline } from '../kit/deadline.js';
import { OutboundPolicy } from '../http/outbound-policy.js';
import { createSubscriptionRegistry } from '../events/subscription-registry.js';
import { measureClockOffset } from '../db/clock.js';
import { reportClockOffset } from '../runtime/clock-check.js';

// What the gateway runs on before any request: the database (migrated, or refused with one line), the event bus,
// the trust store, the services every resolver and worker shares, and the workers (not started yet).

export interface StartedServices {
  database: Database;
  bus: EventBus;
  services: AppServices;
  workers: Worker[];
  /** Closes what start-up opened, in order, within `deadline` (epoch ms). */
  close(deadline: number): Promise<void>;
}

export async function startServices(config: Config, log: Logger): Promise<StartedServices> {
  const database = await openDatabase({ ...databaseOptions(config), log });
  const undo: (() => Promise<void> | void)[] = [() => database.close()];
  const unwind = async () => {
    for (const step of undo.reverse()) await step();
  };
  try {
    const migrations = await prepareDatabase(database, { databaseUrl: config.DATABASE_URL, connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS, migrateOnStart: config.MIGRATE_ON_START }, log);
    if (migrations.pending.length === 0 && config.IDENTITY_DEMO_DATA && !config.DATABASE_URL && (await seedDemoData(database.prisma))) log.info('identity demo data loaded');
    // A round that stalled most likely waits on a connection to a server that is gone; its idle siblings went with it.
    const loops = createLoopRegistry({ onStall: () => database.closeIdleConnections() });
    // Before anything is served or fired: what this process stamps follows the database's clock from the first request.
    const clock = await measureClockOffset(database.prisma);
    const clockOff = reportClockOffset(log, clock.offsetMs, clock.uncertaintyMs, false);
    const bus = await startEventBus(database, log.child({ component: 'event-bus' }));
    undo.push(() => bus.close());
    // Events may have been missed while the LISTEN connection was away: every worker polls, every retry tries now.
    bus.onResync(() => loops.pollAll());
    const trust = new TrustStore(database.prisma, config, bus);
    const metrics = createMetrics(database.prisma, log, { disk: database.disk, loops });
    const outbound = new OutboundPolicy(config.OUTBOUND_ALLOW);
    const keys = createKeyVerifier(database.prisma, config.AUTH_CACHE_MS);
    const credentials = createCredentialWatch({
      liveKeys: (ids) => liveKeyIds(database.prisma, ids),
      keyRecheckMs: keyRecheckMs(config),
      log: log.child({ component: 'credentials' }),
      // A key found revoked is refused at once to every new operation of this process too, not AUTH_CACHE_MS later.
      ended: (why) => {
        metrics.credentialEnds.inc({ why });
        if (why === 'revoked') keys.forget();
      },
    });
    undo.push(() => credentials.close());
    const services: AppServices = {
      db: database.prisma,
      config,
      bus,
      queueDeleteGuards: [refuseDeleteWhileRunning],
      trust,
      verifier: new CmsVerifierPool(config.CMS_WORKERS),
      jobExecutor: createJobExecutor(database.prisma, log.child({ worker: 'job-executor' }), { loops, backoff: faultBackoff(config), outbound }),
      keys,
      tokens: config.OIDC_ISSUER ? createTokenVerifier(tokenSettings(config, config.OIDC_ISSUER), log.child({ component: 'bearer-tokens' })) : null,
      rateLimiter: createRateLimiter(database.prisma, database.kind, config.RATE_LIMIT_PER_MINUTE, { log: log.child({ component: 'rate-limit' }), metrics }),
      metrics,
      outbound,
      loops,
      subscriptions: createSubscriptionRegistry({
        maxPerKey: config.MAX_SUBSCRIPTIONS_PER_KEY,
        maxBufferedBytes: config.SUBSCRIPTION_MAX_BUFFERED_BYTES,
        log: log.child({ component: 'subscriptions' }),
        gauge: metrics.subscriptionsOpen,
      }),
      credentials,
      log,
    };
    undo.push(async () => {
      trust.close();
      await services.verifier.close();
    });
    // Not awaited: a provider that is down at start-up is a 503 for tokens (keys work), not a gateway that will not start.
    void services.tokens?.warmUp();
    services.jobExecutor.bindTaskCreator(createSchedulerTaskCreator(services));
    const workers = createWorkers(services, log, clockOff);
    return {
      database,
      bus,
      services,
      workers,
      async close(deadline) {
        credentials.close();
        trust.close();
        await services.verifier.close();
        await untilDeadline(services.rateLimiter.close(), Math.max(0, deadline - Date.now()));
        await untilDeadline(bus.close(), Math.max(0, deadline - Date.now()));
        await untilDeadline(database.close(), Math.max(0, deadline - Date.now()));
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}

/** How often keys held by open sockets and streams are looked at: AUTH_CACHE_MS, and at least a second. */
export function keyRecheckMs(config: Pick<Config, 'AUTH_CACHE_MS'>): number {
  return Math.max(1000, config.AUTH_CACHE_MS);
}

function tokenSettings(config: Config, issuer: string): TokenSettings {
  return {
    issuer,
    audience: config.OIDC_AUDIENCE!,
    algorithms: config.OIDC_ALGORITHMS,
    clockToleranceSeconds: config.OIDC_CLOCK_TOLERANCE_SECONDS,
    tokenType: config.OIDC_TOKEN_TYPE === '' ? null : config.OIDC_TOKEN_TYPE,
    jwksCacheMs: config.OIDC_JWKS_CACHE_MS,
    jwksCooldownMs: config.OIDC_JWKS_COOLDOWN_MS,
    jwksStaleMs: config.OIDC_JWKS_STALE_MS,
    cacheMs: config.AUTH_CACHE_MS,
    claims: { scopes: config.OIDC_SCOPES_CLAIM, idpScopes: config.OIDC_IDP_SCOPES_CLAIM, system: config.OIDC_SYSTEM_CLAIM, person: config.OIDC_PERSON_CLAIM },
  };
}
