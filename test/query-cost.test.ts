import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { getNamedType, isInputObjectType, isInterfaceType, isObjectType, parse, type GraphQLNamedType } from 'graphql';
import { buildSchema } from '../src/schema/schema.js';
import { operationSize, sizeVariables } from '../src/pipeline/operation.js';
import { LIST_BOUNDS, UNBOUNDED_LISTS, PAGING_ARGUMENTS, isObjectList, pagingArgument } from '../src/pipeline/list-bounds.js';
import { DATABASES } from './helpers/databases.js';
import { NO_WORKERS, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { overHttp, overSse, overWs, type TransportAnswer } from './helpers/transports.js';

// GRAPHQL_MAX_COST counts what will execute: variables' defaults, null variables, literals, every paging argument,
// fragments, aliases, @skip/@include by their values, and unpaged lists by their bound (list-bounds.ts); the same
// verdict on every door. Issue 27 item 5.

const schema = buildSchema();

describe('every list of the schema has a bound the cost counts', () => {
  const types = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith('__'));
  // Types whose lists a paging field pages: the result of a field with a paging argument that is not itself a list.
  const paged = new Set<GraphQLNamedType>();
  for (const type of types) {
    if (!isObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) if (pagingArgument(field) && !isObjectList(field)) paged.add(getNamedType(field.type));
  }

  it('paged by its own argument, by the field holding it, or with a bound named in list-bounds.ts', () => {
    const unbounded: string[] = [];
    for (const type of types) {
      if (!isObjectType(type)) continue;
      for (const field of Object.values(type.getFields())) {
        if (!isObjectList(field) || pagingArgument(field) || paged.has(type)) continue;
        const name = `${type.name}.${field.name}`;
        if (!LIST_BOUNDS.has(name) && !UNBOUNDED_LISTS.has(name)) unbounded.push(name);
      }
    }
    expect(unbounded).toEqual([]);
    // Paged types are reached only through their paging fields, so their lists never fall back to a full page.
    expect([...paged].map((t) => t.name).sort()).toEqual([
      'ApiKeyConnection',
      'JobConnection',
      'JobInstanceConnection',
      'QueueConnection',
      'StubNotificationPage',
      'TaskConnection',
      'VerificationAuditConnection',
    ]);
  });

  it('the schema pages with `first` and `pageSize` only, never through an input object', () => {
    const pagingLike = /^(first|last|take|limit|top|count|size|pageSize|perPage|max)$/i;
    const seen = new Set<string>();
    for (const type of types) {
      if (isObjectType(type) || isInterfaceType(type)) {
        for (const field of Object.values(type.getFields())) for (const arg of field.args) if (pagingLike.test(arg.name)) seen.add(arg.name);
      } else if (isInputObjectType(type)) {
        for (const field of Object.values(type.getFields())) if (pagingLike.test(field.name)) seen.add(`${type.name}.${field.name}`);
      }
    }
    expect([...seen].sort()).toEqual([...PAGING_ARGUMENTS].sort());
  });
});

describe('the estimate counts the values the operation runs with', () => {
  const limits = { defaultPageSize: 10, maxPageSize: 100, unpagedListSize: 20, costCeiling: Number.MAX_SAFE_INTEGER };
  const cost = (query: string, variables?: Record<string, unknown>) => operationSize(schema, parse(query), undefined, variables, limits)?.cost;
  const ISSUE = 'query($n: Int = 100) { queues(first: $n) { nodes { name tasks(first: $n) { nodes { name } } } } }';
  // queues 1 + nodes 1 + n x (name 1 + tasks 1 + nodes 1 + n x name 1)
  const issue = (n: number) => 2 + n * (3 + n);

  it.each<[string, string, Record<string, unknown> | undefined, number]>([
    ['the issue, without n: its default', ISSUE, undefined, issue(100)],
    ['the issue, n: 100', ISSUE, { n: 100 }, issue(100)],
    ['the issue, n: null (the resolver pages by DEFAULT_PAGE_SIZE)', ISSUE, { n: null }, issue(10)],
    ['the issue, n: 3', ISSUE, { n: 3 }, issue(3)],
    ['the issue, n: 101: refused by the resolver, nothing below runs', ISSUE, { n: 101 }, 2],
    ['the issue, n: 0', ISSUE, { n: 0 }, 2],
    ['the issue, n: "7" (fails coercion)', ISSUE, { n: '7' }, 2],
    ['no default, absent', 'query($n: Int) { queues(first: $n) { nodes { name } } }', undefined, 2 + 10],
    ['literal', '{ queues(first: 40) { nodes { name } } }', undefined, 2 + 40],
    ['literal null', '{ queues(first: null) { nodes { name } } }', undefined, 2 + 10],
    ['default in a nested field only', 'query($m: Int = 100) { queues(first: 10) { nodes { tasks(first: $m) { nodes { name description status } } } } }', undefined, 2 + 10 * (2 + 300)],
    ['edges and nodes both', 'query($n: Int = 20) { queues(first: $n) { edges { cursor node { name } } nodes { name } } }', undefined, 1 + (1 + 20 * 3) + (1 + 20)],
    [
      'named and inline fragments',
      'query($n: Int = 100) { ...Q } fragment Q on Query { queues(first: $n) { ...C } } fragment C on QueueConnection { nodes { ... on Queue { name tasks(first: $n) { nodes { name } } } } }',
      undefined,
      issue(100),
    ],
    ['aliases count each', 'query($n: Int = 100) { a: queues(first: $n) { nodes { name } } b: queues(first: $n) { nodes { name } } }', undefined, 2 * (2 + 100)],
    ['@include by its default', 'query($n: Int = 100, $d: Boolean = true) { queues(first: $n) { nodes { name tasks(first: $n) @include(if: $d) { nodes { name } } } } }', undefined, issue(100)],
    ['@include false', 'query($n: Int = 100, $d: Boolean = true) { queues(first: $n) { nodes { name tasks(first: $n) @include(if: $d) { nodes { name } } } } }', { d: false }, 2 + 100],
    ['@skip on a fragment spread', 'query($s: Boolean!) { queues(first: 5) { nodes { name ...T @skip(if: $s) } } } fragment T on Queue { tasks(first: 100) { nodes { name } } }', { s: true }, 2 + 5],
    ['pageSize of a list field, and an unpaged list at GRAPHQL_UNPAGED_LIST_SIZE', 'query($p: Int = 100) { person(oid: "1") { employments(pageSize: $p) { organization { groups { grpId name } } } } }', undefined, 2 + 100 * (1 + 1 + 20 * 2)],
    ['pageSize absent: DEFAULT_PAGE_SIZE', 'query($p: Int) { person(oid: "1") { employments(pageSize: $p) { position } } }', undefined, 2 + 10],
    ['pageSize of a page type', 'query($p: Int = 60) { stubNotifications(type: "sms", pageSize: $p) { totalElements content { id status } } }', undefined, 1 + 1 + 1 + 60 * 2],
    ['an unpaged list with a bound of its own', '{ systemChannels(systemId: "s") { channel } }', undefined, 1 + 8],
  ])('%s', (_name, query, variables, expected) => {
    expect(cost(query, variables)).toBe(expected);
  });

  it('the verdict depends on the variables in paging positions and conditions only', () => {
    expect(sizeVariables(parse('query($a: String, $n: Int = 5, $d: Boolean!) { queues(first: $n, after: $a) { nodes { name @include(if: $d) } } }'))).toEqual(['n', 'd']);
    expect(sizeVariables(parse('query($oid: String!) { person(oid: $oid) { organizations { chief } } }'))).toEqual([]);
  });
});

// A gateway where the issue's document is cheap at DEFAULT_PAGE_SIZE and far over GRAPHQL_MAX_COST at its default.
const ENV = { ...NO_WORKERS, GRAPHQL_MAX_COST: '2000', MAX_PAGE_SIZE: '100', DEFAULT_PAGE_SIZE: '10', GRAPHQL_UNPAGED_LIST_SIZE: '100' };
const ISSUE = 'query($n: Int = 100) { queues(first: $n) { nodes { name tasks(first: $n) { nodes { name } } } } }';
const QUEUE_FIELDS = 'name description rate labels status paused createTime updateTime';
type Verdict = 'refused' | 'runs' | 'BAD_USER_INPUT';

// Documents x variables -> what every door must answer (costs as in the table above, with MAX_COST 2000).
const DOORS_TABLE: [string, string, Record<string, unknown>, Verdict][] = [
  ['the issue without n (default 100)', ISSUE, {}, 'refused'],
  ['the issue with n: 100', ISSUE, { n: 100 }, 'refused'],
  ['the issue with n: null', ISSUE, { n: null }, 'runs'],
  ['the issue with n: 3', ISSUE, { n: 3 }, 'runs'],
  ['the issue with n: 101 (the resolver refuses the page)', ISSUE, { n: 101 }, 'BAD_USER_INPUT'],
  ['a default in a nested field', 'query($m: Int = 100) { queues(first: 10) { nodes { tasks(first: $m) { nodes { name description status } } } } }', {}, 'refused'],
  ['a default in a nested field, m: 5', 'query($m: Int = 100) { queues(first: 10) { nodes { tasks(first: $m) { nodes { name description status } } } } }', { m: 5 }, 'runs'],
  ['literals', '{ queues(first: 100) { nodes { name tasks(first: 100) { nodes { name } } } } }', {}, 'refused'],
  [
    'fragments',
    'query($n: Int = 100) { ...Q } fragment Q on Query { queues(first: $n) { ...C } } fragment C on QueueConnection { nodes { ... on Queue { name tasks(first: $n) { nodes { name } } } } }',
    {},
    'refused',
  ],
  ['fragments, n: 3', 'query($n: Int = 100) { ...Q } fragment Q on Query { queues(first: $n) { ...C } } fragment C on QueueConnection { nodes { ... on Queue { name tasks(first: $n) { nodes { name } } } } }', { n: 3 }, 'runs'],
  ['aliases', `query($n: Int = 100) { a: queues(first: $n) { nodes { ${QUEUE_FIELDS} } } b: queues(first: $n) { nodes { ${QUEUE_FIELDS} } } c: queues(first: $n) { nodes { ${QUEUE_FIELDS} } } }`, {}, 'refused'],
  ['aliases, n: 50', `query($n: Int = 100) { a: queues(first: $n) { nodes { ${QUEUE_FIELDS} } } b: queues(first: $n) { nodes { ${QUEUE_FIELDS} } } c: queues(first: $n) { nodes { ${QUEUE_FIELDS} } } }`, { n: 50 }, 'runs'],
  ['@include by its default', 'query($n: Int = 100, $d: Boolean = true) { queues(first: $n) { nodes { name tasks(first: $n) @include(if: $d) { nodes { name } } } } }', {}, 'refused'],
  ['@include false', 'query($n: Int = 100, $d: Boolean = true) { queues(first: $n) { nodes { name tasks(first: $n) @include(if: $d) { nodes { name } } } } }', { d: false }, 'runs'],
  ['pageSize default and an unpaged list', 'query($p: Int = 100) { person(oid: "1") { employments(pageSize: $p) { organization { groups { grpId name } } } } }', {}, 'refused'],
  ['pageSize 101 of a page type (its field refuses it)', 'query($p: Int = 101) { stubNotifications(type: "sms", pageSize: $p) { content { id } } }', {}, 'BAD_USER_INPUT'],
  ['pageSize 101 of a list field (its field refuses it)', 'query($p: Int = 101) { person(oid: "1") { employments(pageSize: $p) { position } } }', {}, 'BAD_USER_INPUT'],
  ['pageSize 5 and an unpaged list', 'query($p: Int = 100) { person(oid: "1") { employments(pageSize: $p) { organization { groups { grpId name } } } } }', { p: 5 }, 'runs'],
];

type Door = (url: string, query: string, variables: Record<string, unknown>) => Promise<TransportAnswer>;
const DOORS: [string, Door][] = [
  ['POST /graphql', (url, q, v) => overHttp(url, q, v)],
  [
    'GET /graphql',
    async (url, q, v) => {
      const res = await fetch(`${url}/graphql?query=${encodeURIComponent(q)}&variables=${encodeURIComponent(JSON.stringify(v))}`, { headers: { accept: 'application/graphql-response+json' } });
      return { status: res.status, results: [(await res.json()) as TransportAnswer['results'][number]] };
    },
  ],
  ['SSE', (url, q, v) => overSse(url, q, v)],
  ['graphql-ws', (url, q, v) => overWs(url, q, v)],
];

describe.each(DATABASES)('the cost verdict on every door, on %s', (kind) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(kind, ENV);
  }, 60_000);
  afterAll(() => t?.close());

  describe.each(DOORS)('over %s', (door, run) => {
    it.each(DOORS_TABLE)('%s', async (_name, query, variables, verdict) => {
      const answer = await run(t.url, query, variables);
      const errors = answer.results[0]?.errors ?? [];
      const codes = errors.map((e) => e.extensions?.code);
      if (verdict === 'refused') {
        expect(codes).toEqual(['GRAPHQL_VALIDATION_FAILED']);
        expect(errors[0]?.message).toContain('GRAPHQL_MAX_COST');
        if (door.endsWith('/graphql')) expect(answer.status).toBe(400);
      } else {
        expect(codes).not.toContain('GRAPHQL_VALIDATION_FAILED');
        if (verdict === 'BAD_USER_INPUT') expect(errors[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' }, message: expect.stringContaining('at most 100') });
        else expect(answer.results[0]).toHaveProperty('data'); // a refusal before execution has none
      }
    });
  });

  it('the legacy door is judged by the same rule (a route document at its largest page runs)', async () => {
    const listed = await rpc(t.url, 'listQueues', { pageSize: 100 });
    expect(listed.body.error).toBeUndefined();
  });
});

describe('the issue\'s exact document at the default limits (MAX_PAGE_SIZE 500, GRAPHQL_MAX_COST 50000)', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway('pglite', NO_WORKERS);
  }, 60_000);
  afterAll(() => t?.close());
  const EXACT = 'query($n: Int = 500) { queues(first: $n) { nodes { tasks(first: $n) { nodes { name status } } } } }';

  it.each(DOORS)('over %s: refused without n and with n: 500; runs with n: 50', async (_door, run) => {
    for (const variables of [{}, { n: 500 }]) {
      const refused = await run(t.url, EXACT, variables);
      expect(refused.results[0]?.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' }, message: expect.stringContaining('GRAPHQL_MAX_COST') });
    }
    const runs = await run(t.url, EXACT, { n: 50 });
    expect(runs.results[0]).toEqual({ data: { queues: { nodes: [] } } });
  });

  it.each(DOORS)('over %s: unpaged lists count GRAPHQL_UNPAGED_LIST_SIZE (50): two nested run, three are refused', async (_door, run) => {
    const two = await run(t.url, 'query($oid: String!) { person(oid: $oid) { organizations { organization { groups { grpId } } } } }', { oid: '1' });
    expect(two.results[0]?.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND']);
    const three = await run(t.url, '{ organization(oid: "1") { members { person { organizations { organization { members { person { oid } } } } } } } }', {});
    expect(three.results[0]?.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' }, message: expect.stringContaining('GRAPHQL_MAX_COST') });
  });
});

describe('the estimate is never below what the query returns', () => {
  let t: TestGateway;
  const env = { ...NO_WORKERS, MAX_PAGE_SIZE: '6', DEFAULT_PAGE_SIZE: '3' };
  beforeAll(async () => {
    t = await startTestGateway('pglite', env);
    for (let q = 0; q < 7; q++) {
      expect((await rpc(t.url, 'createQueue', { name: `q${q}` })).body.error).toBeUndefined();
      for (let k = 0; k < 7; k++) {
        const created = await rpc(t.url, 'createTask', { queueName: `q${q}`, name: `t${k}`, target: { url: 'https://example.com/x' } });
        expect(created.body.error).toBeUndefined();
      }
    }
  }, 120_000);
  afterAll(() => t?.close());

  /** Fields in an answer, each list item's counted: what the cost counts, every field 1. */
  const fieldsIn = (value: unknown): number => {
    if (Array.isArray(value)) return value.reduce((n: number, item) => n + fieldsIn(item), 0);
    if (value && typeof value === 'object') return Object.values(value).reduce((n: number, v) => n + 1 + fieldsIn(v), 0);
    return 0;
  };

  // How a paging argument is given: absent, a literal, a variable given a value or null, a variable left to its
  // default or to none.
  const pageArgument = fc.record({
    kind: fc.constantFrom('absent' as const, 'literal' as const, 'given' as const, 'null' as const, 'default' as const, 'no default' as const),
    value: fc.constantFrom(-1, 0, 1, 2, 3, 4, 5, 6, 7),
  });
  type PageArgument = { kind: 'absent' | 'literal' | 'given' | 'null' | 'default' | 'no default'; value: number };

  const build = (outer: PageArgument, inner: PageArgument, edges: boolean, fragment: boolean, include: boolean | undefined) => {
    const definitions: string[] = [];
    const variables: Record<string, unknown> = {};
    const arg = (name: string, a: PageArgument): string => {
      if (a.kind === 'absent') return '';
      if (a.kind === 'literal') return `(first: ${a.value})`;
      definitions.push(a.kind === 'default' ? `$${name}: Int = ${a.value}` : `$${name}: Int`);
      if (a.kind === 'given') variables[name] = a.value;
      if (a.kind === 'null') variables[name] = null;
      return `(first: $${name})`;
    };
    const condition = include === undefined ? '' : ' @include(if: $i)';
    if (include !== undefined) (definitions.push('$i: Boolean!'), (variables.i = include));
    const tasks = `tasks${arg('inner', inner)}${condition} { totalCount ${edges ? 'edges { cursor node { name status } }' : 'nodes { name status }'} }`;
    const queue = fragment ? '...Q' : `name ${tasks}`;
    const queues = `queues${arg('outer', outer)} { nodes { ${queue} } }`;
    const query = `query${definitions.length ? `(${definitions.join(', ')})` : ''} { ${queues} }${fragment ? ` fragment Q on Queue { name ${tasks} }` : ''}`;
    return { query, variables };
  };

  it('for random page arguments, given every way, over HTTP', async () => {
    const limits = { defaultPageSize: 3, maxPageSize: 6, unpagedListSize: 50, costCeiling: Number.MAX_SAFE_INTEGER };
    await fc.assert(
      fc.asyncProperty(pageArgument, pageArgument, fc.boolean(), fc.boolean(), fc.option(fc.boolean(), { nil: undefined }), async (outer, inner, edges, fragment, include) => {
        const { query, variables } = build(outer, inner, edges, fragment, include);
        const estimate = operationSize(schema, parse(query), undefined, variables, limits)!.cost;
        const answer = await overHttp(t.url, query, variables);
        expect(answer.results[0]?.errors ?? []).not.toContainEqual(expect.objectContaining({ extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }) }));
        expect(estimate).toBeGreaterThanOrEqual(fieldsIn(answer.results[0]?.data));
      }),
      { numRuns: 100, seed: Number(process.env.FUZZ_SEED ?? 27) },
    );
  }, 120_000);
});
