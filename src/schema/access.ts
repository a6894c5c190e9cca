import { builder } from './builder.js';
import { defineConnection, dropNulls, pageArgs, toConnection, validate, windowFromArgs } from './common.js';
import * as apiKeys from '../access/api-keys.js';
import { apiKeyRules } from '../access/access-rules.js';
import { declaredScopes, mayRun } from '../access/field-scopes.js';

// API keys, administered over GraphQL (scope admin:all); the CLI (`npm run keys`) does the same offline. And
// `viewer`, which any valid key may ask: what that key itself may do, so a front end offers only those actions.

interface Viewer {
  authRequired: boolean;
  keyName: string | null;
  scopes: readonly string[];
  systemId: string | null;
  allowedFields: string[];
}

const ViewerRef = builder.objectRef<Viewer>('Viewer').implement({
  description: 'The caller: the API key of the request and what it may run.',
  fields: (t) => ({
    authRequired: t.exposeBoolean('authRequired', { description: 'Whether the gateway asks every caller for a key (AUTH=on).' }),
    keyName: t.exposeString('keyName', { nullable: true, description: "The key's name; null when no key was sent (possible only with AUTH=off)." }),
    scopes: t.exposeStringList('scopes', { description: "The key's scopes; empty without a key." }),
    systemId: t.exposeString('systemId', { nullable: true, description: 'The only system whose notifications the key may send and read; null: any.' }),
    allowedFields: t.exposeStringList('allowedFields', {
      description: 'Every root field the caller may run, as `Type.field` (`Mutation.pauseQueue`); with AUTH=off, all of them.',
    }),
  }),
});

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
  viewer: t.field({
    type: ViewerRef,
    extensions: { anyKey: true },
    description: 'The caller: its key, scopes and the root fields it may run (any valid key may ask).',
    resolve: (_root, _args, ctx, info) => {
      const principal = ctx.principal ?? null;
      const open = ctx.config.AUTH === 'off';
      const allowedFields: string[] = [];
      for (const root of [info.schema.getQueryType(), info.schema.getMutationType(), info.schema.getSubscriptionType()]) {
        for (const field of Object.values(root?.getFields() ?? {})) {
          if (open || (principal && mayRun(principal, field))) allowedFields.push(`${root!.name}.${field.name}`);
        }
      }
      return { authRequired: !open, keyName: principal?.name ?? null, scopes: principal?.scopes ?? [], systemId: principal?.systemId ?? null, allowedFields: allowedFields.sort() };
    },
  }),
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
    resolve: (_root, args, ctx, info) => apiKeys.createApiKey(ctx.db, validate(apiKeyRules.create, dropNulls(args.input), 'input'), declaredScopes(info.schema)),
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    extensions: { scope: 'admin:all' },
    description: 'Revokes an API key (by id); it stops working at once in this process, within AUTH_CACHE_MS in others, on every door: its open graphql-ws sockets are closed (4403) and its SSE streams ended.',
    args: { id: t.arg.string({ required: true, description: 'The key\'s id.' }) },
    resolve: async (_root, args, ctx) => {
      const revoked = await apiKeys.revokeApiKey(ctx.db, validate(apiKeyRules.id, args.id, 'id'));
      ctx.keys.forget();
      await ctx.credentials.recheck();
      return revoked;
    },
  }),
}));
