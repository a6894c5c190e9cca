import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from './config.js';

// The gateway's command line: serve | migrate | migrate:diff --name N | schema:print | import <file.json> | keys create|list|revoke

const ROOT = resolve(import.meta.dirname, '..');

async function main(): Promise<void> {
  const [command = 'serve', ...rest] = process.argv.slice(2);
  switch (command) {
    case 'serve': {
      const { startGateway } = await import('./app.js');
      const { registerShutdown } = await import('./runtime/shutdown.js');
      const gateway = await startGateway(loadConfig());
      registerShutdown(gateway, gateway.services.config.SHUTDOWN_GRACE_MS);
      return;
    }
    case 'migrate': {
      const { openDatabase, databaseOptions } = await import('./db/client.js');
      const { applyMigrations } = await import('./db/migrations.js');
      const config = loadConfig();
      const db = await openDatabase(databaseOptions(config));
      try {
        const applied = await applyMigrations(db.adapterFactory);
        console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'No pending migrations.');
      } finally {
        await db.close();
      }
      return;
    }
    case 'migrate:diff': {
      const { values } = parseArgs({ args: rest, options: { name: { type: 'string' } } });
      if (!values.name) throw new Error('usage: npm run migrate:diff -- --name <lower_snake_case_name>');
      const { createMigration } = await import('./db/migrations.js');
      const path = await createMigration(values.name);
      console.log(path ? `Wrote ${path}` : 'prisma/schema matches the migrations; nothing to write.');
      return;
    }
    case 'schema:print': {
      const { printContract } = await import('./graphql/schema.js');
      writeFileSync(resolve(ROOT, 'schema.graphql'), printContract());
      console.log('Wrote schema.graphql');
      return;
    }
    case 'import': {
      const [file] = rest;
      if (!file) throw new Error('usage: npm run import -- <file.json>');
      const { openDatabase, databaseOptions } = await import('./db/client.js');
      const { applyMigrations, pendingMigrationNames } = await import('./db/migrations.js');
      const { appliedMigrations } = await import('./db/sql/appliedMigrations.js');
      const { readImportFile, importIdentity } = await import('./identity/import.js');
      const { ValidationError } = await import('./errors.js');
      const config = loadConfig();
      const db = await openDatabase(databaseOptions(config));
      try {
        // Only when something is pending: a running gateway's schema engine may still hold the migration lock.
        const applied = await appliedMigrations(db.prisma).catch(() => []);
        if (config.MIGRATE_ON_START && pendingMigrationNames(applied).length) await applyMigrations(db.adapterFactory);
        const summary = await importIdentity(db.prisma, await readImportFile(file));
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
      return;
    }
    case 'keys': {
      const { runKeysCommand } = await import('./access/keys-cli.js');
      await runKeysCommand(loadConfig(), rest);
      return;
    }
    default:
      throw new Error(`unknown command "${command}"; use serve, migrate, migrate:diff, schema:print, import or keys`);
  }
}

main().then(
  () => {
    // One-shot commands exit when done: the schema engine leaves a lock-timeout timer running for ~10 s.
    if ((process.argv[2] ?? 'serve') !== 'serve') process.exit(); // keeps a command's exitCode
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
