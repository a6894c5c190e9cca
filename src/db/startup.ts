import pg from 'pg';
import type { Logger } from '../log.js';
import type { Database } from './client.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { migrationNames, pendingMigrationNames } from './migration-files.js';
import { appliedMigrations } from './sql/appliedMigrations.js';
import { StartupError } from './startup-error.js';

// What a process checks of its database before it serves: that it answers (one line naming the fault and the variable
// to look at when it does not, instead of whatever the schema engine makes of a driver error), which migrations are
// applied, pending or unknown to this build, and then applies the pending ones when MIGRATE_ON_START says so.


export interface StartupOptions {
  databaseUrl: string | undefined;
  connectTimeoutMs: number;
  migrateOnStart: boolean;
}

export interface MigrationState {
  applied: string[];
  pending: string[];
  /** Recorded as applied by the database but not among this build's migrations: a newer build migrated it. */
  unknown: string[];
}

/** Probes the database, reports its migrations and applies the pending ones (when told to); throws StartupError. */
export async function prepareDatabase(database: Database, options: StartupOptions, log: Logger): Promise<MigrationState> {
  if (options.databaseUrl) await probePostgres(options.databaseUrl, options.connectTimeoutMs);
  let state = await migrationState(database.prisma);
  if (state.unknown.length) {
    // Rolling deploys run the old build beside the new one after the new one migrated: additive migrations keep the
    // old build working, so this is said, not refused (docs/decisions.md).
    log.warn({ unknown: state.unknown }, 'the database was migrated by a newer build of the gateway (migrations this build does not know); serving with this build');
  }
  if (!state.pending.length) return state;
  if (!options.migrateOnStart) {
    log.warn({ pending: state.pending }, 'migrations are pending and MIGRATE_ON_START=off: /readyz answers 503 and requests 503 until `npm run migrate` applies them');
    return state;
  }
  try {
    const { applyMigrations } = await import('./migrations.js');
    const applied = await applyMigrations(database.adapterFactory);
    if (applied.length) log.info({ applied }, 'migrations applied');
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new StartupError(`applying the pending migrations (${state.pending.join(', ')}) failed: ${detail}; nothing of a failed migration is kept (see \`npm run migrate\`)`);
  }
  state = await migrationState(database.prisma);
  return state;
}

/** Which migrations the database has applied, which of this build's are pending, and which it does not know. */
export async function migrationState(db: PrismaClient): Promise<MigrationState> {
  // A database never migrated has no _prisma_migrations table: everything is pending.
  const applied = await appliedMigrations(db).catch((error: unknown) => {
    if (isMissingTable(error)) return [];
    throw error;
  });
  // Asked on every /readyz: the build's migrations are listed once (they do not change while it runs), not read again.
  const local = (buildMigrations ??= migrationNames());
  return { applied, pending: pendingMigrationNames(applied, local), unknown: applied.filter((name) => !local.includes(name)) };
}
let buildMigrations: string[] | undefined;

function isMissingTable(error: unknown): boolean {
  const { code, meta } = (error ?? {}) as { code?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown } } } };
  const cause = meta?.driverAdapterError?.cause;
  return code === 'P2021' || code === '42P01' || cause?.kind === 'TableDoesNotExist' || cause?.originalCode === '42P01';
}

/** One connection of its own, so that a fault is told by what the driver itself saw. */
async function probePostgres(databaseUrl: string, connectTimeoutMs: number): Promise<void> {
  const where = serverOf(databaseUrl);
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: connectTimeoutMs, query_timeout: connectTimeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new StartupError(describeFault(error, where, connectTimeoutMs));
  } finally {
    await client.end().catch(() => undefined);
  }
}

function serverOf(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'the server of DATABASE_URL';
  }
}

/** The operator's line for a database that does not serve: what happened, where, and which variable to check. */
export function describeFault(error: unknown, where: string, connectTimeoutMs: number): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  switch (code) {
    case 'ECONNREFUSED':
      return `the database at ${where} refused the connection: is PostgreSQL running there? (check DATABASE_URL)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the database host of ${where} was not found (check DATABASE_URL)`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `the database at ${where} cannot be reached from here (check DATABASE_URL and the network)`;
    case '28P01':
    case '28000':
      return `the database at ${where} refused the credentials of DATABASE_URL (${text})`;
    case '3D000':
      return `the database of ${where} does not exist (check DATABASE_URL: ${text})`;
    case '57P03':
      return `the database at ${where} is starting up or shutting down and takes no connections yet (try again)`;
    case '53300':
      return `the database at ${where} has no connection slot left (its max_connections is reached)`;
    default:
      if (/timeout/i.test(text)) {
        return `the database at ${where} did not answer within ${connectTimeoutMs} ms (DATABASE_CONNECT_TIMEOUT_MS): is PostgreSQL running and not stopped or overloaded? (check DATABASE_URL)`;
      }
      return `the database at ${where} could not be used: ${text} (check DATABASE_URL)`;
  }
}
