import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execute, parse, type ExecutionResult } from 'graphql';
import { buildSchema } from '../src/schema/schema.js';
import { compiledOperation, executeCompiled } from '../src/pipeline/compiled.js';
import { openDatabase, type Database } from '../src/db/client.js';
import { PrismaClient } from '../src/generated/prisma/client.js';
import { seedDemoData } from '../src/identity/demo.js';
import { loadConfig } from '../src/config.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';

describe('compiled execution', () => {
  const schema = buildSchema();

  it('compiles queries, with or without Prisma relations', () => {
    expect(compiledOperation(schema, parse('query($n: String!) { queue(name: $n) { name labels createTime } }'))).not.toBeNull();
    expect(compiledOperation(schema, parse('{ queues(first: 50) { totalCount nodes { name } } }'))).not.toBeNull();
    expect(compiledOperation(schema, parse('{ person(oid: "1") { oid firstName } }'))).not.toBeNull();
    expect(compiledOperation(schema, parse('{ person(oid: "1") { oid organizations { chief organization { oid } } } }'))).not.toBeNull();
  });

  it('variables made by a legacy route are coerced once, by the compiled operation; what it refuses is answered by graphql-js, word for word', async () => {
    const document = parse('query($n: String!, $first: Int) { queues(first: $first) { totalCount } queue(name: $n) { name } }');
    const contextValue = {} as never;
    let fallbacks = 0;
    const fallback = (args: Parameters<typeof execute>[0]) => {
      fallbacks++;
      return execute(args);
    };
    for (const variableValues of [{ n: 5 }, { n: 'q', first: 'ten' }, { n: 'q', first: 2 ** 40 }, {}, { n: null }]) {
      fallbacks = 0;
      const args = { schema, document, contextValue, variableValues };
      const fromRoute = await executeCompiled(args, fallback, { variablesFromRoute: true });
      expect(fallbacks).toBe(1);
      expect(JSON.parse(JSON.stringify(fromRoute))).toEqual(JSON.parse(JSON.stringify(await execute(args))));
      expect(fromRoute.errors![0]!.message).toMatch(/^Variable "\$(n|first)"/);
    }
    // Variables that coerce run compiled, without graphql-js.
    fallbacks = 0;
    const plain = await executeCompiled({ schema, document: parse('query($n: String!) { __typename }'), contextValue, variableValues: { n: 'q' } }, fallback, { variablesFromRoute: true });
    expect(plain).toEqual({ data: { __typename: 'Query' } });
    expect(fallbacks).toBe(0);
  });

  it('a document runs on graphql-js until it has run GRAPHQL_JIT_AFTER_RUNS times, then compiled; one-off documents never compile', async () => {
    let fallbacks = 0;
    const fallback = (args: Parameters<typeof execute>[0]) => {
      fallbacks++;
      return execute(args);
    };
    const document = parse('query($n: String!) { __typename queue: __type(name: $n) { name } }');
    const outcomes: number[] = [];
    for (let i = 0; i < 5; i++) {
      fallbacks = 0;
      const result = await executeCompiled({ schema, document, contextValue: {} as never, variableValues: { n: 'Queue' } }, fallback, { compileAfter: 2 });
      expect(result).toEqual({ data: { __typename: 'Query', queue: { name: 'Queue' } } });
      outcomes.push(fallbacks);
    }
    expect(outcomes).toEqual([1, 1, 0, 0, 0]);
    // The same text parsed anew each time (as a document with its values written in is): graphql-js every time.
    fallbacks = 0;
    for (let i = 0; i < 5; i++) await executeCompiled({ schema, document: parse(`{ __typename a${i}: __typename }`), contextValue: {} as never }, fallback, { compileAfter: 2 });
    expect(fallbacks).toBe(5);
    // 0: compiled on the first run.
    fallbacks = 0;
    await executeCompiled({ schema, document: parse('{ __typename }'), contextValue: {} as never }, fallback, { compileAfter: 0 });
    expect(fallbacks).toBe(0);
  });

  describe('relations a parent preloaded (Pothos finds them by the identity of the response path)', () => {
    let fresh: FreshDatabase;
    let database: Database;
    let counted: PrismaClient<'query'>;
    let statements = 0;
    let texts: string[] = [];
    beforeAll(async () => {
      fresh = await freshDatabase('pglite');
      database = await openDatabase({ dataDir: fresh.env.DATA_DIR! });
      await seedDemoData(database.prisma);
      counted = new PrismaClient({ adapter: database.adapterFactory, log: [{ emit: 'event' as const, level: 'query' as const }] });
      counted.$on('query', (event) => {
        statements++;
        texts.push(event.query);
      });
    });
    afterAll(async () => {
      await counted?.$disconnect();
      await database?.close();
      await fresh?.drop();
    });

    const config = loadConfig({});
    // What the resolvers read of a context: the database, the configuration and the caller's X-IdpScopes (none sent).
    const contextValue = () => ({ db: counted, config, idpScopes: null }) as never;
    const run = async (source: string, how: 'graphql-js' | 'compiled') => {
      const document = parse(source);
      statements = 0;
      texts = [];
      const result = (how === 'compiled'
        ? await compiledOperation(schema, document)!.run.query(undefined, contextValue(), {})
        : await execute({ schema, document, contextValue: contextValue() })) as ExecutionResult;
      return { result: JSON.parse(JSON.stringify(result)) as ExecutionResult, statements, texts };
    };

    it('the nested read (a person with organizations) is the gateway\'s own two plain statements, on both executors', async () => {
      const source = '{ person(oid: "1000000001") { oid firstName organizations { chief admin active organization { oid shortName } } } }';
      for (const how of ['graphql-js', 'compiled'] as const) {
        const { result, texts } = await run(source, how);
        expect(result.errors).toBeUndefined();
        expect(result.data).toMatchObject({ person: { oid: '1000000001', organizations: [{ organization: { oid: '2000000001' } }, { chief: true, organization: { oid: '2000000002' } }] } });
        expect(texts).toHaveLength(2);
        expect(texts[0]).toMatch(/^SELECT \* FROM "Person" WHERE "oid" = ANY/);
        expect(texts[1]).toMatch(/^SELECT m\.\*, o\."oid" AS "o\.oid".* JOIN "Organization" o/s);
      }
    });

    it.each([
      ['a person with organizations', '{ person(oid: "1000000001") { oid lastName organizations { chief role organization { oid shortName members { person { oid } } } } } }'],
      ['a person with groups and a page of employments', '{ person(oid: "1000000001") { groups { group { grpId organization { oid } } } employments(pageSize: 1, pageIndex: 2) { position } employmentCount } }'],
      ['an organization with members, twice under aliases', '{ a: organization(oid: "2000000002") { members { role person { oid organizations { organization { oid } } } } } b: organization(oid: "2000000001") { oid members { position } } }'],
    ])('%s: the same answer and the same statements compiled as on graphql-js', async (_name, source) => {
      const reference = await run(source, 'graphql-js');
      expect(reference.result.errors).toBeUndefined();
      const compiled = await run(source, 'compiled');
      expect(compiled.result).toEqual(reference.result);
      expect(compiled.statements).toBe(reference.statements);
      expect(reference.statements).toBeLessThanOrEqual(2);
    });
  });
});
