import type { PrismaClient } from './generated/prisma/client.js';
import type { Config } from './config.js';
import type { EventBus } from './events/bus.js';
import type { QueueDeleteGuard } from './queues/queues.js';
import type { CmsVerifierPool } from './signatures/pool.js';
import type { TrustStore } from './signatures/trust.js';
import type { JobExecutor } from './scheduler/executor.js';
import type { KeyVerifier } from './access/api-keys.js';
import type { TokenVerifier } from './access/bearer-tokens.js';
import type { RateLimiter } from './access/rate-limit.js';
import type { GatewayMetrics } from './kit/metrics.js';
import type { LoopRegistry } from './kit/supervised-loop.js';
import type { Logger } from './log.js';
import type { OutboundPolicy } from './http/outbound-policy.js';
import type { SubscriptionRegistry } from './events/subscription-registry.js';
import type { CredentialWatch } from './access/credential-watch.js';

/** What every resolver, REST route and worker of one process shares (the GraphQL context adds the caller). */
export interface AppServices {
  db: PrismaClient;
  config: Config;
  bus: EventBus;
  queueDeleteGuards: QueueDeleteGuard[];
  /** trust anchors per verification profile (signatures area) */
  trust: TrustStore;
  /** worker_threads running CMS verification */
  verifier: CmsVerifierPool;
  /** Runs fired and manual job instances in this process. */
  jobExecutor: JobExecutor;
  keys: KeyVerifier;
  /** Bearer tokens of the OpenID provider (OIDC_ISSUER); null when only API keys are accepted. */
  tokens: TokenVerifier | null;
  rateLimiter: RateLimiter;
  metrics: GatewayMetrics;
  /** Where outbound calls for user-supplied URLs may go (OUTBOUND_ALLOW). */
  outbound: OutboundPolicy;
  /** The supervised loops of this process (readiness reads them; a resync wakes them). */
  loops: LoopRegistry;
  /** The open subscriptions of this process: per-key cap, output bound, access lines. */
  subscriptions: SubscriptionRegistry;
  /** What stays open on a credential (graphql-ws sockets, SSE streams), ended when the key is revoked or the token expires. */
  credentials: CredentialWatch;
  log: Logger;
}
