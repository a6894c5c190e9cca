import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Kind, print, type OperationDefinitionNode } from 'graphql';
import { allRpcRoutes } from '../src/api/legacy/routes.js';
import { allHttpRoutes } from '../src/api/legacy/http-routes.js';
import { methodOf } from '../src/api/legacy/route.js';
import { buildSchema } from '../src/schema/schema.js';
import { rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { httpRequestText, rawExchange } from './helpers/transports.js';

// Generated malformed or hostile requests across every legacy path (taken from the route tables, so later areas
// are included) and /graphql: no 5xx, every answer in its area's envelope, and the database exactly as it was (row
// counts and an md5 of every table). The sample is seeded (FUZZ_SEED) and sized by FUZZ_REQUESTS: 2,000 in the
// suite (a few seconds, and every path and route table entry still gets requests: checked below); `npm run
// test:fuzz` sends the full 10,000.

const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const CONCURRENCY = 16;

interface FuzzRequest {
  kind: 'rpc-path' | 'rpc' | 'graphql' | 'http';
  /** The entry it aims at: a legacy path, an HTTP route template, /rpc or /graphql. */
  target: string;
  method: string;
  path: string;
  /** A header given as a list is sent once per value (through node:http: fetch would join them). */
  headers: Record<string, string | string[]>;
  body?: string | Uint8Array;
}

/** Strings no identifier rule accepts (each has a quote, a NUL, a space or is empty or huge), hostile in content. */
const HOSTILE = [
  '',
  ' ',
  "' OR '1'='1",
  "'; DROP TABLE \"Queue\"; --",
  '"); DELETE FROM "ApiKey"; --',
  '1; SELECT pg_sleep(10)--',
  '{"$ne": null}',
  '{"__proto__": {"admin": true}}',
  '<script>alert(1)</script>',
  '../../../etc/passwd',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'a\udc00',
  '\udfff\ud800',
  '\uffff\ufffe',
  '%00%ff',
  '${jndi:ldap://x/a}',
  '\u202e\u0645 ',
  'x'.repeat(5000) + "'",
  '\\" \\\\ \\u0000',
  'null ',
  'NaN ',
];
const hostileString = fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 40 }).map((s) => `${s}'`), fc.string({ unit: 'binary', maxLength: 20 }).map((s) => `${s}\u0000`));
const hostileNumber = fc.constantFrom(-1, 0, -0, 1.5, 2 ** 31, 2 ** 32, 1e12, 2 ** 53 + 1, 1e308, -1e308, Number.MIN_VALUE);
const hostileLeaf = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null), fc.constantFrom('OPEN', 'CLOSE', 'NOPE', 'open', 'READY'));
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, hostileLeaf, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'name', 'rate', 'label', 'pageSize', 'pageNumber', 'status')), tie('value'), { maxKeys: 4 })),
})).value;

/** encodeURIComponent refuses lone surrogates; URLs and headers carry them as U+FFFD. */
const enc = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd'));

function nested(depth: number, open: string, close: string, core = '1'): string {
  return open.repeat(depth) + core + close.repeat(depth);
}

const rawBodies = fc.oneof(
  fc.constantFrom('', 'null', 'true', '1', '"x"', '[]', '{}', '{', '{"jsonrpc":"2.0"', '[[[', '{"a":}', '\u0000', 'NaN', '{"jsonrpc":"2.0","method":null,"id":{}}'),
  fc.integer({ min: 100, max: 20_000 }).map((n) => nested(n, '[', ']')),
  fc.integer({ min: 100, max: 5000 }).map((n) => nested(n, '{"a":', '}')),
  fc.integer({ min: 1, max: 64 }).map((n) => new Uint8Array(Array.from({ length: n }, (_, i) => [0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x82, 0xf0][i % 9]!))),
  fc.integer({ min: 1, max: 3 }).map((n) => JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { s: 'y'.repeat(n * 400_000) } })),
  // Well-formed calls whose values nest past MAX_JSON_DEPTH (a NUL or a lone surrogate at the bottom), and legacy pages
  // past what a page can be: refused naming the field, never a stack overflow or a value sent to the database.
  fc.tuple(fc.constantFrom('createTask', 'createQueue', 'updateQueue', 'searchTasks'), fc.integer({ min: 60, max: 5000 }), fc.constantFrom('1', '"\\u0000"', '"\\ud800"')).map(
    ([method, n, leaf]) => `{"jsonrpc":"2.0","id":1,"method":"${method}","params":{"queueName":"q","name":"n","target":{"url":"http://x/"},"description":${nested(n, '[', ']', leaf)},"payload":${nested(n, '{"a":', '}', leaf)}}}`,
  ),
  fc.tuple(fc.integer({ min: 60, max: 5000 }), fc.constantFrom('1', '"\\u0000"', '"\\udc00"')).map(
    ([n, leaf]) => `{"query":"mutation($v: JSON) { createTask(input: {queueName: \\"q\\", name: \\"n\\", target: {url: \\"http://x/\\"}, payload: $v}) { name } }","variables":{"v":${nested(n, '{"a":', '}', leaf)}}}`,
  ),
  fc.constantFrom('listQueues', 'searchQueue', 'listTasks', 'searchTasks', 'list', 'search', 'searchJobInstance').chain((method) =>
    fc.constantFrom('{"pageSize":2147483648}', '{"pageNumber":1e12,"pageSize":500}', '{"pageSize":1e400}', '{"pageNumber":-0.5}').map((params) => `{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}}`),
  ),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

describe('fuzz: hostile requests', () => {
  let t: TestGateway;
  let keys: Record<'admin' | 'reader' | 'none', string>;
  beforeAll(async () => {
    t = await startTestGateway('pglite', { AUTH: 'on', RATE_LIMIT_PER_MINUTE: '0', MAX_BODY_BYTES: '262144' });
    keys = { admin: await makeKey(t, ['admin:all']), reader: await makeKey(t, ['queues:read', 'tasks:read']), none: await makeKey(t, ['metrics:read']) };
  });
  afterAll(() => t?.close());

  async function snapshot(): Promise<Record<string, { n: number; sum: string }>> {
    const db = t.gateway.services.db;
    const tables = await db.$queryRawUnsafe<{ tablename: string }[]>(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`);
    const out: Record<string, { n: number; sum: string }> = {};
    for (const { tablename } of tables) {
      const [row] = await db.$queryRawUnsafe<{ n: number; sum: string }[]>(
        `SELECT count(*)::int AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS sum FROM "${tablename.replace(/"/g, '')}" t`,
      );
      out[tablename] = row!;
    }
    return out;
  }

  it(`answers ${TOTAL} generated hostile requests without a 5xx, each in its area's envelope, and changes nothing`, async () => {
    const config = t.gateway.services.config;
    const rpcRoutes = allRpcRoutes(config);
    const httpRoutes = allHttpRoutes(config);
    const schema = buildSchema();
    const isMutation = (doc: { definitions: readonly { kind: string }[] }) =>
      doc.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && (d as OperationDefinitionNode).operation !== 'query');

    const auth = fc.oneof(
      { weight: 6, arbitrary: fc.constant(bearer(keys.admin)) },
      { weight: 1, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: fc.constant({ 'x-api-key': keys.reader }) },
      { weight: 1, arbitrary: fc.constant(bearer(keys.none)) },
      { weight: 1, arbitrary: hostileString.map((s) => ({ authorization: `Bearer ${enc(s).slice(0, 200)}` })) },
    );
    const extraHeaders = fc.oneof(
      fc.constant({}),
      fc.constant({ 'content-type': 'text/plain' }),
      fc.constant({ 'content-type': 'application/json; charset=latin1' }),
      hostileString.map((s) => ({ 'x-request-id': enc(s).slice(0, 300) })),
    );
    // X-IdpScopes sent twice must be refused, never added up (one header with a list is the documented form).
    const idpScopes: fc.Arbitrary<Record<string, string | string[]>> = fc.oneof(
      { weight: 6, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: fc.constant({ 'x-idpscopes': 'fullname, snils' }) },
      { weight: 1, arbitrary: fc.constant({ 'x-idpscopes': ['fullname', 'snils'] as string[] }) },
      { weight: 1, arbitrary: fc.tuple(hostileString, hostileString).map(([a, b]) => ({ 'x-idpscopes': [enc(a).slice(0, 100) || 'openid', enc(b).slice(0, 100) || 'usr_org'] })) },
    );

    /** Params a write route must refuse: generated, then spoiled if they happen to be valid. */
    const spoil = (route: (typeof rpcRoutes)[number], params: unknown): unknown => {
      if (!isMutation(route.document) || !route.params.safeParse(params ?? {}).success) return params;
      const withExtra = typeof params === 'object' && params !== null && !Array.isArray(params) ? { ...params, __fuzz: "'" } : params;
      return route.params.safeParse(withExtra).success ? 'not an object' : withExtra;
    };
    const rpcCall = fc.record({
      route: fc.constantFrom(...rpcRoutes),
      params: fc.oneof(hostileValue, fc.dictionary(fc.constantFrom('name', 'rate', 'label', 'labels', 'status', 'paused', 'namePrefix', 'pageSize', 'pageNumber', 'description', 'input', 'id'), hostileValue, { maxKeys: 5 })),
      id: fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.constant(null), fc.constant({}), fc.constant(undefined)),
      jsonrpc: fc.constantFrom('2.0', '2.0', '2.0', '1.0', undefined, 2),
      wrongMethod: fc.boolean(),
      asResult: fc.boolean(),
    }).map(({ route, params, id, jsonrpc, wrongMethod, asResult }) => {
      const p = spoil(route, params);
      return { route, params: p, call: { ...(jsonrpc !== undefined && { jsonrpc }), method: wrongMethod ? `${methodOf(route)}X` : methodOf(route), ...(asResult ? { result: p } : { params: p }), ...(id !== undefined && { id }) } };
    });

    const rpcPath: fc.Arbitrary<FuzzRequest> = fc.tuple(rpcCall, auth, extraHeaders, fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, rawBodies), fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'PUT'), idpScopes).map(([c, a, h, raw, method, scopes]) => ({
      kind: 'rpc-path',
      target: c.route.path,
      method,
      path: c.route.path,
      headers: { 'content-type': 'application/json', ...a, ...h, ...scopes },
      ...(method !== 'GET' && { body: raw ?? JSON.stringify(c.call) }),
    }));
    const rpcBatch: fc.Arbitrary<FuzzRequest> = fc.tuple(fc.array(rpcCall, { minLength: 0, maxLength: 6 }), fc.boolean(), auth, fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, rawBodies)).map(([calls, single, a, raw]) => ({
      kind: 'rpc',
      target: '/rpc',
      method: 'POST',
      path: '/rpc',
      headers: { 'content-type': 'application/json', ...a },
      body: raw ?? JSON.stringify(single && calls[0] ? calls[0].call : calls.map((c) => c.call)),
    }));

    // GraphQL: the legacy documents with hostile variables, root fields with hostile literal arguments, and
    // hostile documents (deep, wide, aliased, unknown enum values, garbage).
    const readFields = Object.keys(schema.getQueryType()!.getFields());
    const mutationFields = Object.keys(schema.getMutationType()!.getFields());
    const literal = (v: unknown): string =>
      typeof v === 'string' ? JSON.stringify(v) : typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '0') : v === null ? 'null' : typeof v === 'boolean' ? String(v)
        : Array.isArray(v) ? `[${v.map(literal).join(', ')}]` : `{${Object.entries(v as object).map(([k, x]) => `${/^[_A-Za-z]\w*$/.test(k) ? k : 'k'}: ${literal(x)}`).join(', ')}}`;
    const argList = fc.dictionary(fc.constantFrom('name', 'input', 'filter', 'first', 'after', 'orderBy', 'rate', 'id', 'nope'), fc.oneof(hostileValue, fc.constantFrom('NOPE', 'NAME_ASC', '$v')), { maxKeys: 3 });
    const fieldDoc = fc.tuple(fc.boolean(), argList, fc.constantFrom('{ __typename }', '{ name }', '{ totalCount nodes { name } }', '', '{ nope }')).chain(([mutation, args, sel]) =>
      fc.constantFrom(...(mutation ? mutationFields : readFields)).map((field) => {
        const a = Object.entries(args).map(([k, v]) => `${k}: ${v === '$v' ? '$v' : v === 'NOPE' || v === 'NAME_ASC' ? v : literal(v)}`);
        return `${mutation ? 'mutation' : 'query'} ${a.some((x) => x.includes('$v')) ? '($v: String)' : ''} { ${field}${a.length ? `(${a.join(', ')})` : ''} ${sel} }`;
      }),
    );
    const hostileDoc = fc.oneof(
      fc.integer({ min: 5, max: 3000 }).map((n) => `{ ${'queues { nodes { '.repeat(Math.ceil(n / 2))}name${' } }'.repeat(Math.ceil(n / 2))} }`),
      fc.integer({ min: 2, max: 500 }).map((n) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: queues(first: 500) { nodes { name labels } }`).join(' ')} }`),
      fc.integer({ min: 2, max: 3000 }).map((n) => `{ ${'__typename '.repeat(n)}}`),
      fc.integer({ min: 10, max: 5000 }).map((n) => nested(n, '{ a', ' }', '')),
      fc.constantFrom('{ queues(orderBy: NOPE) { totalCount } }', '{ queues(filter: {status: SHUT}) { totalCount } }', '{ queues(first: -1) { totalCount } }', '{ queues(first: 99999999999) { totalCount } }',
        '{ queue(name: 1) { name } }', 'query Q { ...F } fragment F on Query { ...F }', 'query A { __typename } query A { __typename }', 'subscription { queueChanged(name: "nope\'") { name } } query { __typename }',
        '{ apiKeys { nodes { hash } } }', 'mutation { revokeApiKey(id: "\' OR 1=1 --") { id } }', 'mutation { createApiKey(input: {name: "", scopes: []}) { key } }', '{ __schema { types { fields { type { fields { type { name } } } } } } }'),
      fc.string({ maxLength: 300 }),
      // Pages through variable defaults, null defaults, pageSize and @include (issue 27): costed as they run.
      fc.constantFrom(
        'query($n: Int = 500) { queues(first: $n) { nodes { name tasks(first: $n) { nodes { name } } } } }',
        'query($n: Int = null) { queues(first: $n) { nodes { name tasks(first: $n) { nodes { name } } } } }',
        'query($n: Int = 501) { queues(first: $n) { nodes { name } } }',
        'query($p: Int = 500) { person(oid: "1") { employments(pageSize: $p) { organization { members { person { oid } } } } } }',
        'query($d: Boolean = true) { queues(first: 500) { nodes { tasks(first: 500) @include(if: $d) { nodes { name } } } } }',
        'query($p: Int = 500) { ...F } fragment F on Query { a: stubNotifications(type: "sms", pageSize: $p) { content { id } } b: queues(first: $p) { nodes { name } } }',
      ),
    );
    const legacyDocGraphql = rpcCall.map(({ route, params }) => {
      let variables: unknown;
      try {
        variables = route.variables(params as never, { defaultPageSize: 50 });
      } catch {
        variables = params;
      }
      return { query: print(route.document), variables };
    });
    const graphql: fc.Arbitrary<FuzzRequest> = fc
      .tuple(
        fc.oneof(legacyDocGraphql, fc.tuple(fieldDoc, fc.option(hostileValue)).map(([query, v]) => ({ query, variables: v === null ? undefined : { v } })), hostileDoc.map((query) => ({ query })), hostileValue.map((v) => v as { query: unknown })),
        auth,
        fc.constantFrom('POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'POST', 'GET', 'GET', 'PUT'),
        fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, rawBodies),
        fc.constantFrom('application/graphql-response+json', 'application/json', '*/*', 'text/html;q=0.1, application/json', 'text/event-stream'),
        idpScopes,
      )
      .map(([payload, a, method, raw, accept, scopes]) => {
        const text = raw ?? JSON.stringify(payload);
        const get = method === 'GET' && typeof raw !== 'object' ? `?query=${enc(String((payload as { query?: unknown } | null)?.query ?? '')).slice(0, 6000)}` : '';
        return {
          kind: 'graphql' as const,
          target: '/graphql',
          method,
          path: `/graphql${get}`,
          headers: { 'content-type': 'application/json', accept, ...a, ...scopes },
          ...(method !== 'GET' && { body: text }),
        };
      });

    const httpArbs: fc.Arbitrary<FuzzRequest>[] = httpRoutes.map((route) =>
      fc.tuple(fc.array(hostileString, { minLength: 4, maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 8 }), hostileString, { maxKeys: 3 }), hostileValue, auth, fc.constantFrom('GET', 'POST', 'PUT'), idpScopes).map(([segments, query, body, a, method, scopes]) => {
        let i = 0;
        const path = route.path.replace(/\{\w+\}/g, () => enc(segments[i++ % 4]!.slice(0, 200)) || '%20');
        const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, v.slice(0, 200)])).toString();
        return { kind: 'http' as const, target: route.path as string, method, path: `${path}${qs ? `?${qs}` : ''}`, headers: { 'content-type': 'application/json', ...a, ...scopes }, ...(method !== 'GET' && { body: JSON.stringify(body) }) };
      }),
    );

    const anyRequest = fc.oneof({ weight: 4, arbitrary: rpcPath }, { weight: 2, arbitrary: rpcBatch }, { weight: 4, arbitrary: graphql }, ...httpArbs.map((arbitrary) => ({ weight: 2, arbitrary })));
    const requests = fc.sample(anyRequest, { numRuns: TOTAL, seed: SEED });
    // However small the sample, every entry is aimed at.
    const aimedAt = new Set(requests.map((r) => r.target));
    expect(['/rpc', '/graphql', ...rpcRoutes.map((r) => r.path as string), ...httpRoutes.map((r) => r.path as string)].filter((p) => !aimedAt.has(p))).toEqual([]);

    // Seeded only now, after the (slow) sampling: an HTTP connection left idle longer than the server's
    // keep-alive timeout would be reset under the first request that reuses it (a client-side race).
    for (const name of ['seed-a', 'seed-b', 'seed.c']) await rpc(t.url, 'createQueue', { name, labels: ['grp'], rate: 3 }, {}, bearer(keys.admin));
    const before = await snapshot();
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const describeReq = (r: FuzzRequest) => `${r.method} ${r.path.slice(0, 120)} ${typeof r.body === 'string' ? r.body.slice(0, 300) : r.body ? `<${r.body.length} bytes>` : ''}`;
    const check = (r: FuzzRequest, status: number, text: string, contentType: string) => {
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500) return `status ${status}`;
      const repeatedScopes = Array.isArray(r.headers['x-idpscopes']);
      if (status === 204) return repeatedScopes ? 'a repeated X-IdpScopes answered 204' : null;
      if (r.kind === 'graphql' && r.method === 'GET' && text.startsWith('<!doctype html>') && /text\/html|\*\/\*/.test(String(r.headers.accept ?? ''))) return null; // GraphiQL
      if (contentType.startsWith('text/event-stream')) {
        // Over SSE every GraphQL answer is a 200 stream whose events are GraphQL answers (docs/security.md).
        if (r.kind !== 'graphql' || status !== 200) return `an SSE answer with status ${status}: ${text.slice(0, 200)}`;
        const events = text.split('\n\n').filter((block) => block.startsWith('event: next\n'));
        const answers = events.map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as { data?: unknown; errors?: { message: string }[] });
        if (!answers.length || !answers.every((a) => (Array.isArray(a.errors) && a.errors.every((e) => typeof e.message === 'string')) || 'data' in a)) return `not a GraphQL stream: ${text.slice(0, 200)}`;
        if (answers.some((a) => a.errors?.some((e) => /Unexpected error/.test(e.message)))) return `masked internal error: ${text.slice(0, 200)}`;
        if (repeatedScopes && answers.some((a) => a.data)) return `a repeated X-IdpScopes got data: ${text.slice(0, 200)}`;
        return null;
      }
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        return `not JSON (${status}): ${text.slice(0, 200)}`;
      }
      const rpcOk = (b: any) => b && b.jsonrpc === '2.0' && 'id' in b && (('result' in b) !== ('error' in b)) && (!b.error || (Number.isInteger(b.error.code) && typeof b.error.message === 'string'));
      if (r.kind === 'rpc-path' || r.kind === 'rpc') {
        if (Array.isArray(body) ? !body.length || !body.every(rpcOk) : !rpcOk(body)) return `not a JSON-RPC envelope (${status}): ${text.slice(0, 200)}`;
        if ((Array.isArray(body) ? body : [body]).some((b: any) => b.error?.code === -32603)) return `internal error: ${text.slice(0, 200)}`;
      } else if (r.kind === 'graphql') {
        if (!(Array.isArray(body?.errors) && body.errors.every((e: any) => typeof e.message === 'string')) && !(body && 'data' in body)) return `not a GraphQL answer (${status}): ${text.slice(0, 200)}`;
        if (body.errors?.some((e: any) => /Unexpected error/.test(e.message))) return `masked internal error: ${text.slice(0, 200)}`;
      } else if (status >= 400 && (typeof body !== 'object' || body === null)) {
        return `no error body (${status})`;
      }
      // Refused before anything runs (GraphiQL's page and SSE streams aside, above): never a success, and GraphQL's
      // application/json answers to a malformed request (200 with errors only, Yoga's) carry no data.
      if (repeatedScopes && status < 400 && (r.kind !== 'graphql' || (body?.data ?? null) !== null)) return `a repeated X-IdpScopes answered ${status}: ${text.slice(0, 200)}`;
      return null;
    };
    const byKind = new Map<string, { n: number; ms: number }>();
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (;;) {
          const i = next++;
          if (i >= requests.length) return;
          const r = requests[i]!;
          const t0 = performance.now();
          try {
            const res = Object.values(r.headers).some(Array.isArray)
              ? await nodeRequest(`${t.url}${r.path}`, r)
              : await fetch(`${t.url}${r.path}`, { method: r.method, headers: r.headers as Record<string, string>, ...(r.body !== undefined && { body: r.body as BodyInit }), signal: AbortSignal.timeout(15_000) });
            const problem = check(r, res.status, await res.text(), res.headers.get('content-type') ?? '');
            const k = byKind.get(r.kind) ?? { n: 0, ms: 0 };
            byKind.set(r.kind, { n: k.n + 1, ms: k.ms + (performance.now() - t0) });
            if (problem && failures.length < 25) failures.push(`#${i} ${problem}\n    ${describeReq(r)}`);
          } catch (error) {
            const cause = (error as { cause?: { message?: string } }).cause?.message ?? '';
            if (failures.length < 25) failures.push(`#${i} transport: ${(error as Error).message} ${cause} ${JSON.stringify(r.headers).slice(0, 300)}\n    ${describeReq(r)}`);
          }
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(`fuzz: ${requests.length} requests in ${seconds.toFixed(1)} s (seed ${SEED}); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    console.log(`fuzz: by kind ${JSON.stringify(Object.fromEntries([...byKind].map(([k, v]) => [k, { n: v.n, avgMs: Math.round(v.ms / v.n) }])))}`);
    expect(failures).toEqual([]);
    expect(requests.length).toBeGreaterThanOrEqual(Math.min(TOTAL, 10_000));
    expect(await snapshot()).toEqual(before);
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
  }, 240_000);

  // Shapes fetch cannot send, on raw sockets: hostile Host values, absolute-form and asterisk targets, upgrades the
  // gateway does not take, pipelined writes. Each is answered below 500, in the JSON envelope (or empty), with a
  // request id and nothing internal, and changes nothing it should not.
  it('answers raw request shapes (Host, request target, upgrade, pipelining) without a 5xx, a stack or a missing request id', async () => {
    const port = t.gateway.port;
    const auth = bearer(keys.admin);
    const hosts = fc.sample(hostileString, { numRuns: 40, seed: SEED }).map((h) => h.replace(/[\r\n]/g, ' ').replace(/[^\x20-\xff]/g, '?').slice(0, 200));
    await rpc(t.url, 'createQueue', { name: 'seed-a', labels: ['grp'], rate: 3 }, {}, auth); // taken already when the test above ran
    const before = await snapshot();
    const shapes: { name: string; bytes: Buffer; answers?: number }[] = [];
    const body = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    for (const host of [...hosts, 'a b', 'x%zz', 'me@localhost', 'localhost/x', '[::1', `127.0.0.1:${port}`]) {
      const latin1 = (text: string) => Buffer.from(text, 'latin1');
      shapes.push(
        { name: `GET /healthz, Host ${JSON.stringify(host)}`, bytes: latin1(httpRequestText('GET', '/healthz', { host })) },
        { name: `getQueue, Host ${JSON.stringify(host)}`, bytes: latin1(httpRequestText('POST', '/getQueue', { host, 'content-type': 'application/json', ...auth }, body('getQueue', { name: 'seed-a' }))) },
        { name: `GraphQL, Host ${JSON.stringify(host)}`, bytes: latin1(httpRequestText('POST', '/graphql', { host, 'content-type': 'application/json', ...auth }, JSON.stringify({ query: '{ __typename }' }))) },
        { name: `absolute form, authority ${JSON.stringify(host)}`, bytes: latin1(httpRequestText('POST', `http://${host}/getQueue`, { host: `127.0.0.1:${port}`, 'content-type': 'application/json', ...auth }, body('getQueue', { name: 'seed-a' }))) },
        { name: `OPTIONS *, Host ${JSON.stringify(host)}`, bytes: latin1(httpRequestText('OPTIONS', '*', { host })) },
      );
    }
    const local = { host: `127.0.0.1:${port}` };
    const h2c = { connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c', 'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA' };
    for (const [method, target] of [['GET', '*'], ['POST', '*'], ['GET', 'healthz'], ['GET', 'ftp://x/healthz'], ['GET', 'http:///healthz'], ['GET', '//healthz'], ['CONNECT', `127.0.0.1:${port}`]] as const) {
      shapes.push({ name: `${method} ${target}`, bytes: Buffer.from(httpRequestText(method, target, local)) });
    }
    for (const path of ['/healthz', '/getQueue', '/graphql', '/rpc']) {
      shapes.push({ name: `h2c upgrade, ${path}`, bytes: Buffer.from(httpRequestText(path === '/healthz' ? 'GET' : 'POST', path, { ...local, ...h2c, 'content-type': 'application/json', ...auth }, path === '/healthz' ? undefined : path === '/graphql' ? JSON.stringify({ query: '{ __typename }' }) : body('getQueue', { name: 'seed-a' }))) });
    }
    // Pipelined: a write that fails (a taken name) then a read; nothing is created or deleted.
    shapes.push({
      name: 'pipelined create (taken) then read',
      bytes: Buffer.from(
        httpRequestText('POST', '/createQueue', { ...local, 'content-type': 'application/json', ...auth }, body('createQueue', { name: 'seed-a', labels: ['grp'], rate: 3 })) +
          httpRequestText('POST', '/getQueue', { ...local, 'content-type': 'application/json', ...auth }, body('getQueue', { name: 'seed-a' })),
      ),
      answers: 2,
    });
    const failures: string[] = [];
    for (const shape of shapes) {
      const { answers, raw } = await rawExchange(t.url, shape.bytes, { answers: shape.answers ?? 1, timeoutMs: 5000 });
      if (shape.name.startsWith('CONNECT')) continue; // node:http has no CONNECT handler: it closes the connection
      if (answers.length < (shape.answers ?? 1)) {
        failures.push(`${shape.name}: ${answers.length} answers: ${raw.slice(0, 200)}`);
        continue;
      }
      for (const a of answers) {
        if (a.status >= 500 || a.status < 100) failures.push(`${shape.name}: status ${a.status}`);
        if (!a.headers['x-request-id']) failures.push(`${shape.name}: no request id (${a.status})`);
        if (/\bat \w|node_modules|\/work\/|\.ts:\d|Invalid URL/.test(a.body)) failures.push(`${shape.name}: internals in ${a.body.slice(0, 200)}`);
        if (a.body !== '') {
          try {
            JSON.parse(a.body);
          } catch {
            failures.push(`${shape.name}: not JSON (${a.status}): ${a.body.slice(0, 200)}`);
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(await snapshot()).toEqual(before);
  }, 120_000);
});

/** A request through node:http, whose headers may repeat, read as the fetch answers are. */
function nodeRequest(target: string, r: FuzzRequest): Promise<{ status: number; headers: { get(name: string): string | null }; text(): Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(target, { method: r.method, headers: r.headers, signal: AbortSignal.timeout(15_000) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, headers: { get: (name) => [res.headers[name] ?? []].flat()[0] ?? null }, text: async () => text });
      });
    });
    req.on('error', reject);
    req.end(r.body);
  });
}
