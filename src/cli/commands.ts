import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config.js';
import type { CliCommand, EnvName } from './command.js';
import { createLogger } from '../log.js';
import { tracingEnabled } from '../telemetry/enabled.js';
import { PROJECT_ROOT } from '../kit/project-root.js';

// Every command of src/main.ts, once: the parser (src/cli/parse.ts), the help (src/cli/help.ts) and the dispatch all
// read this table, so a command cannot exist without its help, and the help cannot list an option the parser refuses.

const DATABASE_ENV: readonly EnvName[] = ['DATABASE_URL', 'DATA_DIR', 'MIGRATE_ON_START'];

export const COMMANDS: readonly CliCommand[] = [
  {
    path: ['serve'],
    script: 'start',
    summary: 'Start the gateway: GraphQL at /graphql (HTTP, SSE, WebSocket), the console, the legacy paths, health, metrics and workers.',
    details:
      'The default command. Applies pending migrations first (MIGRATE_ON_START). SIGTERM or SIGINT drains and exits;\na second signal exits at once. Every variable the gateway reads is described in docs/configuration.md.',
    env: ['PORT', 'HOST', 'DATABASE_URL', 'DATA_DIR', 'AUTH', 'LOG_LEVEL', 'MIGRATE_ON_START', 'GRAPHIQL', 'CONSOLE', 'IDENTITY_DEMO_DATA'],
    keepsRunning: true,
    async run() {
      const config = loadConfig();
      // Tracing starts before the gateway's modules are loaded; off, no OpenTelemetry module is (src/telemetry/).
      const log = createLogger(config.LOG_LEVEL);
      const tracing = tracingEnabled() ? (await import('../telemetry/tracing.js')).startTracing(log) : undefined;
      const { startGateway } = await import('../app.js');
      const { registerShutdown } = await import('./shutdown.js');
      const gateway = await startGateway(config, { log, tracing });
      registerShutdown(gateway, gateway.services.config.SHUTDOWN_GRACE_MS);
    },
  },
  {
    path: ['migrate'],
    script: 'migrate',
    summary: 'Apply the pending migrations of prisma/migrations to the configured database, then exit.',
    env: ['DATABASE_URL', 'DATA_DIR'],
    async run() {
      const { openDatabase, databaseOptions } = await import('../db/client.js');
      const { applyMigrations } = await import('../db/migrations.js');
      const db = await openDatabase(databaseOptions(loadConfig()));
      try {
        const applied = await applyMigrations(db.adapterFactory);
        console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'No pending migrations.');
      } finally {
        await db.close();
      }
    },
  },
  {
    path: ['migrate:diff'],
    script: 'migrate:diff',
    summary: 'Write a new migration from the changes of prisma/schema/*.prisma since the last one.',
    details: 'Writes prisma/migrations/<timestamp>_<name>/migration.sql, or nothing when the schema matches the migrations.\nNeeds no database: the diff runs on a temporary embedded one.',
    options: [{ name: 'name', value: 'lower_snake_case_name', description: "the migration's name (a-z, 0-9, _)", required: true }],
    async run({ values }) {
      const { createMigration } = await import('../db/migrations.js');
      const path = await createMigration(values.name!);
      console.log(path ? `Wrote ${path}` : 'prisma/schema matches the migrations; nothing to write.');
    },
  },
  {
    path: ['schema:print'],
    script: 'schema:print',
    summary: 'Rewrite schema.graphql (the GraphQL contract) from the Pothos schema.',
    details: 'Needs no database. test/contracts.test.ts fails while schema.graphql and the code differ.',
    async run() {
      const { printContract } = await import('../schema/schema.js');
      writeFileSync(join(PROJECT_ROOT, 'schema.graphql'), printContract());
      console.log('Wrote schema.graphql');
    },
  },
  {
    path: ['import'],
    script: 'import',
    summary: 'Upsert the persons, organizations, groups and memberships of a JSON file; all or nothing.',
    details: 'Prints {"imported": {...counts}}. A refused file changes nothing, lists its problems by position and exits 2.',
    args: [{ name: 'file.json', description: 'the file to import (its format: docs/api.md, identity)' }],
    env: DATABASE_ENV,
    async run({ positionals }) {
      const { openDatabase, databaseOptions } = await import('../db/client.js');
      const [{ applyMigrations }, { pendingMigrationNames }] = await Promise.all([import('../db/migrations.js'), import('../db/migration-files.js')]);
      const { appliedMigrations } = await import('../db/sql/appliedMigrations.js');
      const { readImportFile, importIdentity } = await import('../identity/import.js');
      const { ValidationError } = await import('../errors.js');
      const config = loadConfig();
      const db = await openDatabase(databaseOptions(config));
      try {
        // Only when something is pending: a running gateway's schema engine may still hold the migration lock.
        const applied = await appliedMigrations(db.prisma).catch(() => []);
        if (config.MIGRATE_ON_START && pendingMigrationNames(applied).length) await applyMigrations(db.adapterFactory);
        const summary = await importIdentity(db.prisma, await readImportFile(positionals[0]!));
        console.log(JSON.stringify({ imported: summary }));
      } catch (error) {
        if (error instanceof ValidationError) {
          console.error(`Import refused, nothing was changed:\n${error.issues.map((i) => `  ${i.field}: ${i.message}`).join('\n')}`);
          process.exitCode = 2;
          return;
        }
        throw error;
      } finally {
        await db.close();
      }
    },
  },
  {
    path: ['keys'],
    script: 'keys',
    summary: 'Create, list and revoke API keys in the configured database.',
    details: 'With the embedded database, stop the server first: one process at a time may open DATA_DIR.',
    env: DATABASE_ENV,
  },
  {
    path: ['keys', 'create'],
    script: 'keys',
    summary: 'Create an API key and print it once, on stdout (only its hash is stored).',
    details: 'Scopes are <area>:<verb> (queues:read, notifications:send, ...) or admin:all; an unknown scope is refused and the known ones listed.',
    options: [
      { name: 'name', value: 'name', description: 'what the key is for, shown in lists', required: true },
      { name: 'scopes', value: 'scope,scope', description: 'comma-separated scopes the key grants', required: true },
      { name: 'system', value: 'systemId', description: 'bind the key to one system: it sends and reads only its notifications' },
    ],
    env: DATABASE_ENV,
    async run({ values }) {
      const { createKey } = await import('./keys-command.js');
      await createKey(loadConfig(), { name: values.name!, scopes: values.scopes!, system: values.system });
    },
  },
  {
    path: ['keys', 'list'],
    script: 'keys',
    summary: 'List the API keys, one a line: id, prefix, name, scopes, system, created, state (never the key itself).',
    env: DATABASE_ENV,
    async run() {
      const { listKeys } = await import('./keys-command.js');
      await listKeys(loadConfig(), npmForm(commandNamed('keys create'), ['--name', '<name>', '--scopes', '<scope,scope>']));
    },
  },
  {
    path: ['keys', 'revoke'],
    script: 'keys',
    summary: 'Revoke an API key; requests with it are refused from then on (after AUTH_CACHE_MS in running servers).',
    args: [{ name: 'id or prefix', description: "the key's id, or its 12-hex prefix (the part after gw_)" }],
    env: DATABASE_ENV,
    async run({ positionals }) {
      const { revokeKey } = await import('./keys-command.js');
      await revokeKey(loadConfig(), positionals[0]!);
    },
  },
];

/** The command `src/main.ts` runs with no arguments. */
export const DEFAULT_COMMAND = commandNamed('serve');

/** How an operator runs the command: `npm start`, `npm run keys -- create`. */
export function npmForm(command: CliCommand, extra: readonly string[] = []): string {
  const base = command.script === 'start' ? 'npm start' : `npm run ${command.script}`;
  const words = [...command.path.slice(1), ...extra];
  return words.length ? `${base} -- ${words.join(' ')}` : base;
}

export function commandNamed(name: string): CliCommand {
  const command = COMMANDS.find((c) => c.path.join(' ') === name);
  if (!command) throw new Error(`no command "${name}" in the command table`);
  return command;
}

/** The subcommands of a group. */
export function subcommandsOf(group: CliCommand): CliCommand[] {
  return COMMANDS.filter((c) => c.path.length === group.path.length + 1 && group.path.every((w, i) => c.path[i] === w));
}

/** Where the help of everything is. */
export const MAIN_HELP_HINT = 'npx tsx src/main.ts --help';

export function helpHint(command: CliCommand | null): string {
  return command ? npmForm(command, ['--help']) : MAIN_HELP_HINT;
}
