import { z } from 'zod';
import { toFieldIssues } from './validation.js';
import { parseOrigins } from './http/browser-policy.js';
import { isLoopbackHost } from './http/loopback.js';
import { OutboundPolicy } from './http/outbound-policy.js';
import { parseManifestPaths, parseTrustedDocumentsPolicy } from './kit/trusted-documents-policy.js';
import { ASYMMETRIC_ALGORITHMS, DEFAULT_TOKEN_ALGORITHMS } from './kit/token-rules.js';
import { DEFAULT_RETRY_SCHEDULE, retryScheduleText } from './kit/retry-schedule.js';

// Every environment variable the gateway reads, parsed and validated here and nowhere else.

/** Statement texts a process prepares by name unless configured (PostGraphile 5 keeps up to 100 per connection). */
export const DEFAULT_PREPARED_STATEMENTS = 256;

/** Default of EMBEDDED_MIN_FREE_BYTES: a WAL segment (16 MiB), a checkpoint's and a start's writes, and room for what is written between two readings. */
export const DEFAULT_EMBEDDED_MIN_FREE_BYTES = 64 * 1024 * 1024;

const bool = z.enum(['on', 'off', 'true', 'false', '1', '0']).transform((v) => v === 'on' || v === 'true' || v === '1');
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def);

const envSchema = z.object({
  PORT: int(4000, 0, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgresql:// URL').optional(),
  DATA_DIR: z.string().min(1).default('.data'),
  /** Embedded only: free bytes on DATA_DIR's disk below which writes are refused (503) and start-up declines; 0 = no floor. */
  EMBEDDED_MIN_FREE_BYTES: int(DEFAULT_EMBEDDED_MIN_FREE_BYTES, 0),
  /** PostgreSQL only: connections in this process's pool (the LISTEN connection comes on top). */
  DATABASE_POOL_MAX: int(10, 1, 1000),
  /** PostgreSQL only: how long opening a connection may take before the attempt fails (a fault, retried). */
  DATABASE_CONNECT_TIMEOUT_MS: int(5000, 100, 600_000),
  /** PostgreSQL only: server-side statement_timeout of every pooled connection; 0 = none. */
  DATABASE_STATEMENT_TIMEOUT_MS: int(15_000, 0, 86_400_000),
  /**
   * PostgreSQL only: client-side deadline of a pooled connection's statement (a server that vanished answers no
   * statement_timeout); its connection is then closed. Default: DATABASE_STATEMENT_TIMEOUT_MS + 5000, or 20000 when
   * that is 0. 0 = none.
   */
  DATABASE_QUERY_TIMEOUT_MS: z.coerce.number().int().min(0).max(86_400_000).optional(),
  /** PostgreSQL only: distinct statements prepared by name on each connection; 0 for a pooler that cannot carry them. */
  DATABASE_PREPARED_STATEMENTS: int(DEFAULT_PREPARED_STATEMENTS, 0, 10_000),
  /** Longest pause between retries after a fault: worker rounds, LISTEN reconnects, settling writes. */
  BACKOFF_MAX_MS: int(30_000, 100, 600_000),
  /** Longest one round of a worker loop may take; past it the round is abandoned, the loop restarted and /readyz names it. */
  WORKER_ROUND_DEADLINE_MS: int(10_000, 100, 3_600_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAX_BODY_BYTES: int(1_048_576, 1024),
  /** How long a client may take to send a request's headers before it is answered 408 and cut. */
  HTTP_HEADERS_TIMEOUT_MS: int(10_000, 100, 600_000),
  /** How long a client may take to send a whole request, body included (not the answer: streams stay open). */
  HTTP_REQUEST_TIMEOUT_MS: int(30_000, 100, 3_600_000),
  /** Hosts, IP addresses or CIDRs (comma- or space-separated) outbound calls may reach although they are not public. */
  OUTBOUND_ALLOW: z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return OutboundPolicy.parseAllowList(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Comma-separated origins (https://app.example) whose pages may call the gateway cross-origin; empty = none. */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return parseOrigins(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** Calls one JSON-RPC batch on /rpc may hold; a larger batch is refused whole (-32600). */
  MAX_BATCH_CALLS: int(100, 1, 10_000),
  DEFAULT_PAGE_SIZE: int(50, 1),
  MAX_PAGE_SIZE: int(500, 1),
  QUEUE_MAX_RATE: int(1000, 1),
  MIGRATE_ON_START: bool.default(true),
  GRAPHIQL: bool.default(true),
  /** Serve the operator console (console/dist/) at /console. */
  CONSOLE: bool.default(true),
  SHUTDOWN_GRACE_MS: int(10_000, 0),
  GRAPHQL_WS_INIT_TIMEOUT_MS: int(3000, 100),
  /** Open subscriptions (graphql-ws and SSE together) one API key may hold in one process; 0 = no cap. */
  MAX_SUBSCRIPTIONS_PER_KEY: int(10_000, 0, 1_000_000),
  /** Output waiting for one subscriber (a WebSocket, an SSE stream) past which it is dropped: its client stopped reading. */
  SUBSCRIPTION_MAX_BUFFERED_BYTES: int(1_048_576, 16_384, 1_073_741_824),
  /** Load the identity demo data set into an empty embedded database at start-up (never on DATABASE_URL). */
  IDENTITY_DEMO_DATA: bool.default(true),
  /** Directory of PEM trust anchors of the default profile (v1 path, GraphQL default); absent = none. */
  TRUST_DIR: z.string().min(1).optional(),
  /** PEM directory of the `cloud` profile (POST /v2/verify/cms/cloud); absent = TRUST_DIR. */
  TRUST_DIR_CLOUD: z.string().min(1).optional(),
  /** PEM directory of the `tech` profile (POST /v2/verify/cms/tech); absent = TRUST_DIR. */
  TRUST_DIR_TECH: z.string().min(1).optional(),
  /** worker_threads verifying CMS signatures; 0 = os.availableParallelism(). */
  CMS_WORKERS: int(0, 0, 256),
  /** Fire cron jobs in this process (manual runs work either way). */
  SCHEDULER: bool.default(true),
  /** Longest sleep of the cron scheduler between rounds; bounds the delay when a wake-up NOTIFY is lost. */
  SCHEDULER_MAX_SLEEP_MS: int(1000, 10, 60_000),
  /** Due jobs claimed per statement. */
  SCHEDULER_BATCH_SIZE: int(500, 1, 10_000),
  /** An occurrence older than this when fired is a misfire (Quartz misfireThreshold). */
  SCHEDULER_MISFIRE_THRESHOLD_MS: int(60_000, 1000),
  /** How often the scheduler fails RUNNING instances whose lease ran out (their process died mid-run). */
  SCHEDULER_REAP_INTERVAL_MS: int(15_000, 100),
  /** on: every request needs an API key; off: allowed only on a loopback HOST. Default: on when DATABASE_URL is set. */
  AUTH: z.enum(['on', 'off']).optional(),
  /** How long a checked key (or verified bearer token, never past its expiry) is trusted in memory before it is checked again. */
  AUTH_CACHE_MS: int(5000, 0),
  /** Comma-separated paths of trusted-document manifests (the persisted-documents.json codegen's client preset writes). */
  TRUSTED_DOCUMENTS_MANIFESTS: z.string().default('').transform(parseManifestPaths),
  /** Which callers may run listed documents only: token (the default), all, off, or a comma-separated list of token, key, anonymous. */
  TRUSTED_DOCUMENTS: z
    .string()
    .default('token')
    .transform((value, ctx) => {
      try {
        return parseTrustedDocumentsPolicy(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    }),
  /** The OpenID provider whose bearer tokens (JWT access tokens) are accepted beside API keys; unset: keys only. */
  OIDC_ISSUER: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  /** The audience (`aud`) a token must name: this gateway's resource indicator at the provider. Required with OIDC_ISSUER. */
  OIDC_AUDIENCE: z.string().trim().min(1).optional(),
  /** Signature algorithms a token may use (comma- or space-separated); asymmetric ones only. */
  OIDC_ALGORITHMS: z
    .string()
    .default(DEFAULT_TOKEN_ALGORITHMS.join(','))
    .transform((value, ctx) => {
      const names = value.split(/[\s,]+/).filter(Boolean);
      const refused = names.filter((n) => !ASYMMETRIC_ALGORITHMS.has(n));
      if (refused.length || names.length === 0) {
        ctx.addIssue({ code: 'custom', message: `${refused.length ? `${refused.join(', ')} not allowed` : 'empty'}; name asymmetric algorithms only (${[...ASYMMETRIC_ALGORITHMS].join(', ')}): none and the HS* family never` });
        return z.NEVER;
      }
      return names;
    }),
  /** Seconds a token's exp and nbf may be off, for clocks that disagree a little. */
  OIDC_CLOCK_TOLERANCE_SECONDS: int(30, 0, 300),
  /** The `typ` header a token must carry (RFC 9068 access tokens: at+jwt); empty: any (for providers that set none). */
  OIDC_TOKEN_TYPE: z.string().trim().default('at+jwt'),
  /** How long the provider's keys (JWKS) are used before they are read again, unknown key or not. */
  OIDC_JWKS_CACHE_MS: int(600_000, 1000, 86_400_000),
  /** The least time between two reads of the provider's keys (discovery included), failed reads counted too. */
  OIDC_JWKS_COOLDOWN_MS: int(30_000, 0, 3_600_000),
  /** How long past OIDC_JWKS_CACHE_MS the last good keys go on serving tokens while the provider's keys cannot be read. */
  OIDC_JWKS_STALE_MS: int(3_600_000, 0, 604_800_000),
  /** Claim holding the token's gateway scopes: a claim name, or a JSON Pointer (/ns/scopes) into nested claims. */
  OIDC_SCOPES_CLAIM: z.string().trim().min(1).default('scope'),
  /** Claim holding the personal-data scopes the person consented to (ESIA names: fullname, snils, ...). */
  OIDC_IDP_SCOPES_CLAIM: z.string().trim().min(1).default('scope'),
  /** Claim binding a token to one notification system (as a key's --system); unset: tokens are bound to none. */
  OIDC_SYSTEM_CLAIM: z.string().trim().min(1).optional(),
  /** Claim binding a token to one person (its oid); such a token without identity:read reads only its own records. */
  OIDC_PERSON_CLAIM: z.string().trim().min(1).optional(),
  /** The console's public client at the provider (OIDC_ISSUER): the console then offers sign-in there beside the API key. */
  CONSOLE_OIDC_CLIENT_ID: z.string().trim().min(1).optional(),
  GRAPHQL_MAX_DEPTH: int(12, 1),
  GRAPHQL_MAX_ALIASES: int(30, 0),
  GRAPHQL_MAX_COST: int(50_000, 1),
  /** Runs of a document on graphql-js before it is compiled (graphql-jit) for the runs after; 0 compiles on the first run. */
  GRAPHQL_JIT_AFTER_RUNS: int(2, 0, 1_000_000),
  /** Items the cost counts for a list with no paging argument and no bound in the data model (list-bounds.ts). */
  GRAPHQL_UNPAGED_LIST_SIZE: int(50, 1),
  /** A query or mutation not finished this long after it began answers SERVICE_UNAVAILABLE (503, Retry-After); 0: no deadline. */
  REQUEST_DEADLINE_MS: int(10_000, 0, 3_600_000),
  /** Operations per minute per API key (token bucket; shared by all processes on PostgreSQL, in memory on the embedded database); 0 = no limit. */
  RATE_LIMIT_PER_MINUTE: int(600, 0),
  /** On SIGTERM, /readyz answers 503 this long before the listener closes (lets load balancers notice). */
  SHUTDOWN_READY_DELAY_MS: int(0, 0),
  /** Run the task dispatcher in this process (tasks are created and read either way). */
  TASK_DISPATCHER: bool.default(true),
  /** Tasks one process runs at once, whatever the queues' rates. */
  TASK_CONCURRENCY: int(100, 1, 10_000),
  /** The most tasks of one queue a process runs at once unless the queue sets maxConcurrentDispatches; default: half of TASK_CONCURRENCY. */
  TASK_QUEUE_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).optional(),
  /** Longest deadline a task's attempt may have (target.timeoutSeconds): how long one hanging target may hold a task slot. */
  TASK_MAX_TIMEOUT_SECONDS: int(600, 1, 1800),
  /** A claimed task's lease, renewed every third of it while it runs; a dead process's tasks run again after it. */
  TASK_LEASE_SECONDS: int(30, 1, 3600),
  /** Longest sleep of the dispatcher between rounds; bounds the delay when a wake-up NOTIFY is lost. */
  TASK_POLL_MS: int(5000, 10, 300_000),
  /** On stop, how long running tasks may finish before they are interrupted and handed back. */
  TASK_STOP_WAIT_MS: int(5000, 0),
  DELIVERY_WORKER: bool.default(true),
  DELIVERY_LEASE_SECONDS: int(60, 1, 86_400),
  DELIVERY_BATCH: int(20, 1, 1000),
  /** Waits before each retry of a notification (DEFAULT_RETRY_SCHEDULE: 5s,5m,30m,2h,5h,10h,10h), jittered; FAILED once spent. */
  DELIVERY_RETRY_SCHEDULE: retryScheduleText.default(retryScheduleText.parse(DEFAULT_RETRY_SCHEDULE)),
  DELIVERY_POLL_MS: int(1000, 10),
  /** How long an Idempotency-Key answers with its first result; after that the key is free again (and its record deleted). */
  IDEMPOTENCY_TTL_SECONDS: int(86_400, 1, 31_536_000),
});

export type Config = Omit<z.output<typeof envSchema>, 'AUTH' | 'DATABASE_QUERY_TIMEOUT_MS' | 'TASK_QUEUE_CONCURRENCY'> & {
  AUTH: 'on' | 'off';
  DATABASE_QUERY_TIMEOUT_MS: number;
  TASK_QUEUE_CONCURRENCY: number;
};

/** How much longer than the server's statement_timeout the client waits by default: the server's own cancel comes first. */
const QUERY_TIMEOUT_MARGIN_MS = 5000;
/** The client-side statement deadline when there is no statement_timeout to follow. */
const DEFAULT_QUERY_TIMEOUT_MS = 20_000;


/** Every variable the gateway reads (docs/configuration.md documents each; a test checks). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape);

/** Variables no longer read, and what replaced them: set, they stop the start rather than be ignored. */
const REPLACED: Record<string, string> = {
  DELIVERY_MAX_ATTEMPTS: 'DELIVERY_RETRY_SCHEDULE (its waits + 1 attempts, e.g. "5s,5m,30m,2h,5h,10h,10h")',
  DELIVERY_BACKOFF_BASE_MS: 'DELIVERY_RETRY_SCHEDULE (the wait before each retry, e.g. "5s,5m,30m,2h,5h,10h,10h")',
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const replaced = Object.keys(REPLACED).filter((name) => env[name] !== undefined);
  if (replaced.length) throw new Error(`Invalid configuration:\n${replaced.map((name) => `  ${name}: no longer read; use ${REPLACED[name]}`).join('\n')}`);
  const result = envSchema.safeParse(env);
  if (!result.success) {
    const lines = toFieldIssues(result.error).map((i) => `  ${i.field}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  if (result.data.HTTP_HEADERS_TIMEOUT_MS > result.data.HTTP_REQUEST_TIMEOUT_MS) {
    throw new Error(
      `Invalid configuration:\n  HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS (${result.data.HTTP_REQUEST_TIMEOUT_MS}); the headers are part of the request.`,
    );
  }
  // Keys and anonymous callers exist whatever else is set: held to no manifest at all, they could run nothing.
  if ((result.data.TRUSTED_DOCUMENTS.has('key') || result.data.TRUSTED_DOCUMENTS.has('anonymous')) && result.data.TRUSTED_DOCUMENTS_MANIFESTS.length === 0) {
    throw new Error(
      `Invalid configuration:\n  TRUSTED_DOCUMENTS: holds ${[...result.data.TRUSTED_DOCUMENTS].join(', ')} callers to the trusted documents, but TRUSTED_DOCUMENTS_MANIFESTS names no manifest.`,
    );
  }
  const oidc = oidcIssue(result.data);
  if (oidc) throw new Error(`Invalid configuration:\n  ${oidc}`);
  const auth = result.data.AUTH ?? (result.data.DATABASE_URL ? 'on' : 'off');
  if (auth === 'off' && !isLoopbackHost(result.data.HOST)) {
    throw new Error(
      `Invalid configuration:\n  AUTH: "off" is allowed only when HOST is a loopback address (127.0.0.0/8, ::1, localhost); HOST is "${result.data.HOST}". Set AUTH=on and create a key with \`npm run keys -- create\`.`,
    );
  }
  const statementTimeout = result.data.DATABASE_STATEMENT_TIMEOUT_MS;
  const queryTimeout = result.data.DATABASE_QUERY_TIMEOUT_MS ?? (statementTimeout ? statementTimeout + QUERY_TIMEOUT_MARGIN_MS : DEFAULT_QUERY_TIMEOUT_MS);
  // One queue whose targets all hang may hold half of a process's task slots by default: the others keep the rest.
  const queueConcurrency = result.data.TASK_QUEUE_CONCURRENCY ?? Math.ceil(result.data.TASK_CONCURRENCY / 2);
  return { ...result.data, AUTH: auth, DATABASE_QUERY_TIMEOUT_MS: queryTimeout, TASK_QUEUE_CONCURRENCY: queueConcurrency };
}

/** What is wrong with the OpenID settings taken together; null when nothing is. */
function oidcIssue(env: z.output<typeof envSchema>): string | null {
  if (env.CONSOLE_OIDC_CLIENT_ID && !env.OIDC_ISSUER) return 'CONSOLE_OIDC_CLIENT_ID: set OIDC_ISSUER too (the provider the console signs in at, whose tokens the gateway accepts)';
  if (env.CONSOLE_OIDC_CLIENT_ID && !env.CONSOLE) return 'CONSOLE_OIDC_CLIENT_ID: the console is off (CONSOLE=off), so nothing would sign in with it';
  if (!env.OIDC_ISSUER) return env.OIDC_AUDIENCE ? 'OIDC_AUDIENCE: set OIDC_ISSUER too, or nothing checks it' : null;
  if (!env.OIDC_AUDIENCE) return 'OIDC_AUDIENCE: required with OIDC_ISSUER (the resource indicator of this gateway at the provider); without it a token made for any other service would be accepted';
  const issuer = new URL(env.OIDC_ISSUER);
  if (issuer.protocol !== 'https:' && !isLoopbackHost(issuer.hostname)) return `OIDC_ISSUER: must be https:// (keys read over plain HTTP could be replaced on the way); http:// is allowed for a loopback provider only`;
  if (issuer.search || issuer.hash) return 'OIDC_ISSUER: must have no query or fragment (OpenID Connect Discovery 1.0, section 2)';
  return null;
}
