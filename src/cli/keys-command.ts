import type { Config } from '../config.js';
import { databaseOptions, openDatabase, type Prisma } from '../db/client.js';
import { applyMigrations } from '../db/migrations.js';
import { ValidationError } from '../errors.js';
import { parseInput } from '../validation.js';
import { UsageError } from './usage-error.js';
import { apiKeyRules, type CreateApiKeyInput } from '../access/access-rules.js';
import { assertKnownScopes, createApiKey, listApiKeys, revokeApiKey } from '../access/api-keys.js';

// `keys create|list|revoke` (src/cli/commands.ts) over the configured database; the embedded one must not be open
// in a server at the same time.

async function withDatabase<T>(config: Config, work: (db: Prisma) => Promise<T>): Promise<T> {
  const db = await openDatabase(databaseOptions(config));
  try {
    if (config.MIGRATE_ON_START) await applyMigrations(db.adapterFactory);
    return await work(db.prisma);
  } finally {
    await db.close();
  }
}

/** Prints the new key alone on stdout (scripts capture it) and what it is on stderr. */
export async function createKey(config: Config, options: { name: string; scopes: string; system?: string | undefined }): Promise<void> {
  // Checked before the database opens, so a typo costs nothing.
  const [{ buildSchema }, { declaredScopes }] = await Promise.all([import('../schema/schema.js'), import('../access/field-scopes.js')]);
  let input: CreateApiKeyInput;
  let known: Set<string>;
  try {
    input = parseInput(apiKeyRules.create, {
      name: options.name,
      scopes: options.scopes.split(',').filter((s) => s.trim() !== ''),
      ...(options.system !== undefined && { systemId: options.system }),
    });
    known = declaredScopes(buildSchema());
    assertKnownScopes(input.scopes, known);
  } catch (error) {
    // A refused value, not a malformed command line: exit 1 as any refusal, with the pointer to the help.
    if (error instanceof ValidationError) throw new UsageError(error.message, { exitCode: 1 });
    throw error;
  }
  const { key, apiKey } = await withDatabase(config, (db) => createApiKey(db, input, known));
  console.log(key);
  console.error(`Created API key ${apiKey.id} "${apiKey.name}" (prefix ${apiKey.prefix}; scopes ${apiKey.scopes.join(',')}${apiKey.systemId ? `; system ${apiKey.systemId}` : ''}).`);
  console.error('The key above is shown only now; only its hash is stored.');
}

/**
 * One key a line, tab-separated, on stdout; an empty list says so on stderr, so stdout stays the list, with
 * `createCommand` (how to create one, as the command table writes it).
 */
export async function listKeys(config: Config, createCommand: string): Promise<void> {
  const page = await withDatabase(config, (db) => listApiKeys(db, { skip: 0, take: 10_000, withTotal: false }));
  if (page.items.length === 0) {
    console.error(`There are no API keys yet. Create one with: ${createCommand}`);
    return;
  }
  for (const k of page.items) {
    console.log([k.id, k.prefix, k.name, k.scopes.join(','), k.systemId ?? '-', k.createdAt.toISOString(), k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active'].join('\t'));
  }
}

export async function revokeKey(config: Config, target: string): Promise<void> {
  const revoked = await withDatabase(config, (db) => revokeApiKey(db, target));
  console.log(`Revoked ${revoked.id} (prefix ${revoked.prefix}) at ${revoked.revokedAt?.toISOString()}`);
}
