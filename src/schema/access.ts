import { builder } from './builder.js';
import { defineConnection, dropNulls, pageArgs, toConnection, validate, windowFromArgs } from './common.js';
import * as apiKeys from '../access/api-keys.js';
import { apiKeyRules } from '../access/access-rules.js';
import { declaredScopes } from '../pipeline/access.js';
import { buildSchema } from './schema.js';

// API keys, administered over GraphQL (scope admin:all); the CLI (`npm run keys`) does the same offline.

const ApiKeyRef = builder.objectRef<apiKeys.ApiKey>('ApiKey').implement({
  description: 'An API key, without its secret (only its SHA-256 hash is stored).',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Identifier.' }),
    name: t.exposeString('name', { description: 'What the key is for.' }),
    prefix: t.exposeString('prefix', { description: 'The public part of the key (`gw_<prefix>_...`), to recognise it.' }),
    scopes: t.exposeStringList('scopes', { description: 'Scopes `<area>:<verb>`; admin:all grants everything.' }),
    systemId: t.exposeString('systemId', { nullable: true, description: 'The only system whose notifications this key may send and read; null: any.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the key was created.' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When the key was revoked; null while it works.' }),
  }),
});

const CreatedApiKeyRef = builder.objectRef<{ key: string; apiKey: apiKeys.ApiKey }>('CreatedApiKey').implement({
  description: 'A new API key and, this once, its secret.',
  fields: (t) => ({
    key: t.exposeString('key', { description: 'The whole key, shown only now: send it as `Authorization: Bearer <key>`.' }),
    apiKey: t.field({ type: ApiKeyRef, description: 'The stored key.', resolve: (c) => c.apiKey }),
  }),
});

const ApiKeyConnection = defineConnection('ApiKey', ApiKeyRef, 'API key');

const CreateApiKeyInput = builder.inputType('CreateApiKeyInput', {
  description: 'A new API key.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'What the key is for (1-100 characters).' }),
    scopes: t.stringList({ required: true, description: 'Scopes `<area>:<verb>` (see docs/security.md), or admin:all.' }),
    systemId: t.string({ description: 'Binds the key to one system: it may send and read only that system\'s notifications.' }),
  }),
});

builder.queryFields((t) => ({
  apiKeys: t.field({
    type: ApiKeyConnection,
    extensions: { scope: 'admin:all' },
    description: 'API keys, oldest first, a page at a time.',
    args: { ...pageArgs(t.arg) },
    resolve: async (_root, args, ctx, info) => toConnection(await apiKeys.listApiKeys(ctx.db, windowFromArgs(ctx, args, info))),
  }),
}));

builder.mutationFields((t) => ({
  createApiKey: t.field({
    type: CreatedApiKeyRef,
    extensions: { scope: 'admin:all' },
    description: 'Creates an API key and returns its secret, this once.',
    args: { input: t.arg({ type: CreateApiKeyInput, required: true, description: 'The key.' }) },
    resolve: (_root, args, ctx) => apiKeys.createApiKey(ctx.db, validate(apiKeyRules.create, dropNulls(args.input), 'input'), declaredScopes(buildSchema())),
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    extensions: { scope: 'admin:all' },
    description: 'Revokes an API key (by id); it stops working at once in this process, within AUTH_CACHE_MS in others.',
    args: { id: t.arg.string({ required: true, description: 'The key\'s id.' }) },
    resolve: async (_root, args, ctx) => {
      const revoked = await apiKeys.revokeApiKey(ctx.db, validate(apiKeyRules.id, args.id, 'id'));
      ctx.keys.forget();
      return revoked;
    },
  }),
}));
