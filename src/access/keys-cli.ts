import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { databaseOptions, openDatabase } from '../db/client.js';
import { applyMigrations } from '../db/migrations.js';
import { ValidationError } from '../errors.js';
import { parseInput } from '../validation.js';
import { apiKeyRules, type CreateApiKeyInput } from './access-rules.js';
import { assertKnownScopes, createApiKey, listApiKeys, revokeApiKey } from './api-keys.js';

const USAGE = `usage:
  npm run keys -- create --name <name> --scopes <scope,scope> [--system <systemId>]
  npm run keys -- list
  npm run keys -- revoke <id or prefix>`;

/** `keys create|list|revoke` over the configured database (the embedded one must not be open in a server). */
export async function runKeysCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { name: { type: 'string' }, scopes: { type: 'string' }, system: { type: 'string' } },
  });
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke') throw new Error(USAGE);
  let create: { input: CreateApiKeyInput; known: Set<string> } | undefined;
  if (sub === 'create') {
    // Checked before the database opens, so a typo costs nothing.
    const [{ buildSchema }, { declaredScopes }] = await Promise.all([import('../graphql/schema.js'), import('../graphql/plugins/use-access-control.js')]);
    try {
      const input = parseInput(apiKeyRules.create, {
        name: values.name,
        scopes: (values.scopes ?? '').split(',').filter((s) => s.trim() !== ''),
        ...(values.system !== undefined && { systemId: values.system }),
      });
      const known = declaredScopes(buildSchema());
      assertKnownScopes(input.scopes, known);
      create = { input, known };
    } catch (error) {
      if (error instanceof ValidationError) throw new Error(`${error.message}\n${USAGE}`);
      throw error;
    }
  }
  const db = await openDatabase(databaseOptions(config));
  try {
    if (config.MIGRATE_ON_START) await applyMigrations(db.adapterFactory);
    if (create) {
      const { key, apiKey } = await createApiKey(db.prisma, create.input, create.known);
      console.log(key);
      console.error(`Created API key ${apiKey.id} "${apiKey.name}" (prefix ${apiKey.prefix}; scopes ${apiKey.scopes.join(',')}${apiKey.systemId ? `; system ${apiKey.systemId}` : ''}).`);
      console.error('The key above is shown only now; only its hash is stored.');
    } else if (sub === 'list') {
      const page = await listApiKeys(db.prisma, { skip: 0, take: 10_000 });
      for (const k of page.items) {
        console.log([k.id, k.prefix, k.name, k.scopes.join(','), k.systemId ?? '-', k.createdAt.toISOString(), k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active'].join('\t'));
      }
    } else {
      const target = positionals[0];
      if (!target) throw new Error(USAGE);
      const revoked = await revokeApiKey(db.prisma, target);
      console.log(`Revoked ${revoked.id} (prefix ${revoked.prefix}) at ${revoked.revokedAt?.toISOString()}`);
    }
  } finally {
    await db.close();
  }
}
