import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printContract } from '../src/schema/schema.js';
import { diffMigrationsToSchema } from '../src/db/migrations.js';

describe('contracts', () => {
  it('schema.graphql equals the printed Pothos schema (run `npm run schema:print` after an intended change)', () => {
    expect(readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8')).toBe(printContract());
  });

  it('every type, field, argument and enum value of schema.graphql has a description', async () => {
    const { buildSchema } = await import('../src/schema/schema.js');
    const schema = buildSchema();
    const missing: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || ['String', 'Int', 'Float', 'Boolean', 'ID'].includes(type.name)) continue;
      if (!type.description) missing.push(type.name);
      if ('getFields' in type) {
        for (const field of Object.values(type.getFields())) {
          if (!field.description) missing.push(`${type.name}.${field.name}`);
          for (const arg of 'args' in field ? field.args : []) if (!arg.description) missing.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
      if ('getValues' in type) for (const v of type.getValues()) if (!v.description) missing.push(`${type.name}.${v.name}`);
    }
    expect(missing).toEqual([]);
  });

  it('the migrations produce exactly prisma/schema (the schema engine diff is empty)', async () => {
    expect(await diffMigrationsToSchema()).toBe('');
  });
});

describe('access scopes', () => {
  it('every root field declares the scope that guards it (extensions.scope = "<area>:<verb>")', async () => {
    const { buildSchema } = await import('../src/schema/schema.js');
    const schema = buildSchema();
    const missing: string[] = [];
    for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
      for (const field of Object.values(root?.getFields() ?? {})) {
        const scope = field.extensions?.scope;
        if (typeof scope !== 'string' || !/^[a-z]+:[a-z]+$/.test(scope)) missing.push(`${root!.name}.${field.name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('route tables', () => {
  it('claim each path once, and the guard fires on a real duplicate', async () => {
    const { loadConfig } = await import('../src/config.js');
    const { allRpcRoutes, assertUniqueRoutes } = await import('../src/api/legacy/routes.js');
    const { allHttpRoutes } = await import('../src/api/legacy/http-routes.js');
    const config = loadConfig({});
    const rpc = allRpcRoutes(config);
    const http = allHttpRoutes(config);
    expect(rpc.length).toBeGreaterThan(20);
    expect(() => assertUniqueRoutes([...rpc, rpc[3]!], (r) => r.path)).toThrow(`two legacy routes claim ${rpc[3]!.path}`);
    expect(() => assertUniqueRoutes([...http, { ...http[0]! }], (r) => `${r.method} ${r.path}`)).toThrow(`two legacy routes claim ${http[0]!.method} ${http[0]!.path}`);
    // The same path under two methods is two routes (the stubs' GET and PUT /v1/type/{type}/ids/{ids}).
    expect(http.filter((r) => r.path === '/v1/type/{type}/ids/{ids}').map((r) => r.method).sort()).toEqual(['GET', 'PUT']);
  });
});
