import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, post, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';

// The twelve queue paths of spec 4.3 over HTTP, their GraphQL twins, and /rpc, on both databases.

const NOT_FOUND = -32004;
const INVALID_PARAMS = -32602;
const CONFLICT = -32009;

describe.each(DATABASES)('queues on %s', (kind) => {
  let t: TestGateway;
  let url: string;
  beforeAll(async () => {
    t = await startTestGateway(kind, { QUEUE_MAX_RATE: '50' });
    url = t.url;
    for (const [name, labels] of [['alpha', ['blue']], ['beta', ['blue', 'red']], ['gamma', []]] as const) {
      const r = await rpc(url, 'createQueue', { name, labels: [...labels], description: `queue ${name}` });
      expect(r.body.result.name).toBe(name);
    }
  });
  afterAll(() => t?.close());

  it('createQueue makes an OPEN queue, echoes the id, and refuses a taken name', async () => {
    const r = await rpc(url, 'createQueue', { name: 'q.create-1', rate: 4, labels: ['g'] }, { id: 'abc' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ jsonrpc: '2.0', id: 'abc', result: { name: 'q.create-1', status: 'OPEN', paused: false, rate: 4, labels: ['g'] } });
    expect(Date.parse(r.body.result.createTime)).not.toBeNaN();
    const again = await rpc(url, 'createQueue', { name: 'q.create-1' });
    expect(again.body.error).toMatchObject({ code: CONFLICT, data: { code: 'CONFLICT' } });
  });

  it('queues created at once (sharing statements) are answered as if each came alone, one per name, each announced', async () => {
    const names = Array.from({ length: 24 }, (_, i) => `q.burst-${i}`);
    const signals = names.map((name) => t.gateway.services.bus.subscribe('queue', name));
    const create = (name: string, params: Record<string, unknown>, door: 'rpc' | 'graphql') =>
      door === 'rpc'
        ? rpc(url, 'createQueue', { name, ...params }).then((r) => (r.body.result ? { name: r.body.result.name as string, rate: r.body.result.rate as number } : r.body.error.data.code))
        : gql(url, 'mutation($i: CreateQueueInput!) { createQueue(input: $i) { name rate } }', { i: { name, ...params } }).then((r) => r.data?.createQueue ?? r.errors![0]!.extensions!.code);
    const answers = await Promise.all([
      ...names.map((name, i) => create(name, { rate: 2, labels: ['burst'] }, i % 2 ? 'rpc' : 'graphql')),
      ...names.slice(0, 6).map((name) => create(name, { description: 'the same name, other columns' }, 'rpc')),
      ...names.slice(6, 12).map((name, i) => create(name, { rate: 3, labels: ['burst'] }, i % 2 ? 'rpc' : 'graphql')),
    ]);
    for (const name of names) {
      const wins = answers.filter((a) => typeof a === 'object' && a.name === name);
      expect(wins, name).toHaveLength(1);
      expect(answers.filter((a) => a === 'CONFLICT')).toHaveLength(12);
      const stored = (await rpc(url, 'getQueue', { name })).body.result;
      expect(stored).toMatchObject({ name, rate: wins[0]!.rate });
    }
    for (const [i, signal] of signals.entries()) {
      expect((await signal.next()).value).toEqual({ kind: 'event', detail: names[i] });
      await signal.return!();
    }
  });

  it('createQueue names every bad field and writes nothing', async () => {
    const r = await rpc(url, 'createQueue', { name: 'bad name!', rate: 0, labels: 'x', extra: 1 });
    expect(r.body.error.code).toBe(INVALID_PARAMS);
    const fields = r.body.error.data.fields.map((f: { field: string }) => f.field).sort();
    expect(fields).toEqual(['params.extra', 'params.labels', 'params.name', 'params.rate']);
    const over = await rpc(url, 'createQueue', { name: 'too-fast', rate: 51 });
    expect(over.body.error.data.fields).toEqual([{ field: 'params.rate', message: 'must be at most 50' }]);
    expect((await rpc(url, 'getQueue', { name: 'too-fast' })).body.error.code).toBe(NOT_FOUND);
  });

  it('getQueue finds by name; unknown is not found; a bad name is invalid params', async () => {
    expect((await rpc(url, 'getQueue', { name: 'alpha' })).body.result).toMatchObject({ name: 'alpha', description: 'queue alpha' });
    expect((await rpc(url, 'getQueue', { name: 'nope' })).body.error).toMatchObject({ code: NOT_FOUND, message: 'queue "nope" not found' });
    expect((await rpc(url, 'getQueue', {})).body.error.data.fields).toEqual([{ field: 'params.name', message: 'must be a string' }]);
  });

  it('listQueues orders by name and pages', async () => {
    const all = await rpc(url, 'listQueues', {});
    const names = all.body.result.queues.map((q: { name: string }) => q.name);
    expect(names).toEqual([...names].sort());
    const page = await rpc(url, 'listQueues', { pageSize: 1, pageNumber: 1 });
    expect(page.body.result.queues.map((q: { name: string }) => q.name)).toEqual([names[1]]);
    expect(page.body.result.totalCount).toBe(names.length);
    // A page past the end is empty and still counts every queue.
    expect((await rpc(url, 'listQueues', { pageSize: 1, pageNumber: names.length + 5 })).body.result).toMatchObject({ queues: [], totalCount: names.length });
    expect((await rpc(url, 'listQueues', { pageSize: 0 })).body.error.code).toBe(INVALID_PARAMS);
    expect((await rpc(url, 'listQueues', { pageSize: 100_000 })).body.error).toMatchObject({ code: INVALID_PARAMS, data: { fields: [{ field: 'params.pageSize', message: expect.stringContaining('at most') }] } });
  });

  it('openQueue and closeQueue set status and move updateTime forward', async () => {
    const before = (await rpc(url, 'getQueue', { name: 'gamma' })).body.result;
    await new Promise((r) => setTimeout(r, 5)); // kept: the millisecond clock must move for updateTime to move forward
    const closed = (await rpc(url, 'closeQueue', { name: 'gamma' })).body.result;
    expect(closed.status).toBe('CLOSE');
    expect(Date.parse(closed.updateTime)).toBeGreaterThan(Date.parse(before.updateTime));
    await new Promise((r) => setTimeout(r, 5)); // kept: as above
    const opened = (await rpc(url, 'openQueue', { name: 'gamma' })).body.result;
    expect(opened.status).toBe('OPEN');
    expect(Date.parse(opened.updateTime)).toBeGreaterThan(Date.parse(closed.updateTime));
    for (const m of ['openQueue', 'closeQueue']) {
      expect((await rpc(url, m, { name: 'nope' })).body.error.code).toBe(NOT_FOUND);
      expect((await rpc(url, m, { name: 42 })).body.error.code).toBe(INVALID_PARAMS);
    }
  });

  it('updateQueue returns the changed queue', async () => {
    const r = await rpc(url, 'updateQueue', { name: 'beta', description: 'changed', rate: 7 });
    expect(r.body.result).toMatchObject({ name: 'beta', description: 'changed', rate: 7, labels: ['blue', 'red'] });
    expect((await rpc(url, 'updateQueue', { name: 'nope', rate: 2 })).body.error.code).toBe(NOT_FOUND);
    expect((await rpc(url, 'updateQueue', { name: 'beta', rate: 'fast' })).body.error.data.fields[0].field).toBe('params.rate');
  });

  it('maxConcurrentDispatches (per process) is set on create and update by both doors, 0 puts back the default; bad values are named and change nothing', async () => {
    const created = await rpc(url, 'createQueue', { name: 'shared-out', rate: 40, maxConcurrentDispatches: 8 });
    expect(created.body.result).toMatchObject({ name: 'shared-out', rate: 40, maxConcurrentDispatches: 8 });
    expect((await rpc(url, 'createQueue', { name: 'default-share' })).body.result.maxConcurrentDispatches).toBeNull();
    expect((await rpc(url, 'updateQueue', { name: 'shared-out', maxConcurrentDispatches: 3 })).body.result.maxConcurrentDispatches).toBe(3);
    const viaGraphql = await gql(url, 'mutation { updateQueue(name: "shared-out", input: { maxConcurrentDispatches: 12 }) { maxConcurrentDispatches rate } }');
    expect(viaGraphql.data).toEqual({ updateQueue: { maxConcurrentDispatches: 12, rate: 40 } });
    const created2 = await gql(url, 'mutation { createQueue(input: { name: "gql-share", maxConcurrentDispatches: 2 }) { maxConcurrentDispatches } }');
    expect(created2.data).toEqual({ createQueue: { maxConcurrentDispatches: 2 } });
    expect((await rpc(url, 'updateQueue', { name: 'shared-out', maxConcurrentDispatches: 0 })).body.result.maxConcurrentDispatches).toBeNull();
    expect((await gql(url, '{ queue(name: "gql-share") { maxConcurrentDispatches } }')).data).toEqual({ queue: { maxConcurrentDispatches: 2 } });

    for (const bad of [-1, 10_001, 2.5, '4']) {
      const legacy = await rpc(url, 'updateQueue', { name: 'gql-share', maxConcurrentDispatches: bad });
      expect(legacy.body.error.code).toBe(INVALID_PARAMS);
      expect(legacy.body.error.data.fields.map((f: { field: string }) => f.field)).toEqual(['params.maxConcurrentDispatches']);
      expect((await rpc(url, 'createQueue', { name: 'never-made', maxConcurrentDispatches: bad })).body.error.code).toBe(INVALID_PARAMS);
    }
    const graphqlBad = await gql(url, 'mutation { updateQueue(name: "gql-share", input: { maxConcurrentDispatches: -3 }) { name } }');
    expect(graphqlBad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'input.maxConcurrentDispatches', message: 'must be at least 0 (0: the default, TASK_QUEUE_CONCURRENCY)' }] });
    expect((await rpc(url, 'getQueue', { name: 'gql-share' })).body.result.maxConcurrentDispatches).toBe(2);
    expect((await rpc(url, 'getQueue', { name: 'never-made' })).body.error.code).toBe(NOT_FOUND);
  });

  it('searchQueue filters by prefix, status, paused and label, with rowsCount', async () => {
    const r = await rpc(url, 'searchQueue', { label: 'blue', pageSize: 1 });
    expect(r.body.rowsCount).toBe(2);
    expect(r.body.result.map((q: { name: string }) => q.name)).toEqual(['alpha']);
    const prefix = await rpc(url, 'searchQueue', { namePrefix: 'gam', status: 'OPEN', paused: false });
    expect(prefix.body.result.map((q: { name: string }) => q.name)).toEqual(['gamma']);
    // A prefix is matched as written: "_" and "%" are not wildcards.
    expect((await rpc(url, 'searchQueue', { namePrefix: 'al_' })).body).toMatchObject({ result: [], rowsCount: 0 });
    expect((await rpc(url, 'searchQueue', { namePrefix: '%' })).body).toMatchObject({ result: [], rowsCount: 0 });
    const none = await rpc(url, 'searchQueue', { namePrefix: 'zzz' });
    expect(none.body).toMatchObject({ result: [], rowsCount: 0 });
    expect((await rpc(url, 'searchQueue', { status: 'HALF' })).body.error.data.fields[0].field).toBe('params.status');
  });

  it('searchQueueLabels returns the queues of a group', async () => {
    const r = await rpc(url, 'searchQueueLabels', { label: 'red' });
    expect(r.body).toMatchObject({ rowsCount: 1, result: [{ name: 'beta' }] });
    expect((await rpc(url, 'searchQueueLabels', { label: 'none' })).body).toMatchObject({ rowsCount: 0, result: [] });
    expect((await rpc(url, 'searchQueueLabels', {})).body.error.code).toBe(INVALID_PARAMS);
  });

  it('changeQueueRate changes the rate within bounds', async () => {
    expect((await rpc(url, 'changeQueueRate', { name: 'alpha', rate: 9 })).body.result.rate).toBe(9);
    expect((await rpc(url, 'changeQueueRate', { name: 'nope', rate: 2 })).body.error.code).toBe(NOT_FOUND);
    expect((await rpc(url, 'changeQueueRate', { name: 'alpha', rate: -1 })).body.error.code).toBe(INVALID_PARAMS);
    expect((await rpc(url, 'getQueue', { name: 'alpha' })).body.result.rate).toBe(9);
  });

  it('pauseQueue (params, or under result as the spec shows) and resumeQueue', async () => {
    expect((await rpc(url, 'pauseQueue', { name: 'alpha' })).body.result.paused).toBe(true);
    expect((await rpc(url, 'resumeQueue', { name: 'alpha' })).body.result.paused).toBe(false);
    const viaResult = await rpc(url, 'pauseQueue', undefined, { result: { name: 'alpha' } });
    expect(viaResult.body.result).toMatchObject({ name: 'alpha', paused: true });
    expect((await rpc(url, 'resumeQueue', undefined, { result: { name: 'alpha' } })).body.error.code).toBe(INVALID_PARAMS);
    expect((await rpc(url, 'pauseQueue', { name: 'nope' })).body.error.code).toBe(NOT_FOUND);
    expect((await rpc(url, 'resumeQueue', { name: 'nope' })).body.error.code).toBe(NOT_FOUND);
  });

  it('deleteQueue removes the queue; then it is not found', async () => {
    await rpc(url, 'createQueue', { name: 'doomed' });
    expect((await rpc(url, 'deleteQueue', { name: 'doomed' })).body.result.name).toBe('doomed');
    expect((await rpc(url, 'deleteQueue', { name: 'doomed' })).body.error.code).toBe(NOT_FOUND);
    expect((await rpc(url, 'deleteQueue', { name: '' })).body.error.code).toBe(INVALID_PARAMS);
  });

  it('GraphQL twins: queue, queues connection, mutations, error codes', async () => {
    const created = await gql(url, 'mutation($i: CreateQueueInput!) { createQueue(input: $i) { name rate status } }', { i: { name: 'gql-q', rate: 2 } });
    expect(created.data).toEqual({ createQueue: { name: 'gql-q', rate: 2, status: 'OPEN' } });
    const dup = await gql(url, 'mutation { createQueue(input: {name: "gql-q"}) { name } }');
    expect(dup.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    const missing = await gql(url, '{ queue(name: "nope") { name } }');
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const bad = await gql(url, 'mutation { changeQueueRate(name: "gql-q", rate: 0) { name } }');
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'rate', message: 'must be at least 1' }] });
    const page1 = await gql(url, '{ queues(first: 2, filter: {status: OPEN}) { totalCount nodes { name } pageInfo { hasNextPage endCursor } } }');
    const conn = page1.data!.queues;
    expect(conn.nodes).toHaveLength(2);
    expect(conn.pageInfo.hasNextPage).toBe(true);
    const page2 = await gql(url, 'query($a: String) { queues(first: 2, after: $a, filter: {status: OPEN}) { nodes { name } pageInfo { hasPreviousPage } } }', { a: conn.pageInfo.endCursor });
    expect(page2.data!.queues.pageInfo.hasPreviousPage).toBe(true);
    expect(page2.data!.queues.nodes[0].name > conn.nodes[1].name).toBe(true);
    const byLabel = await gql(url, '{ queues(filter: {label: "blue"}, orderBy: NAME_DESC) { nodes { name } } }');
    expect(byLabel.data!.queues.nodes.map((q: { name: string }) => q.name)).toEqual(['beta', 'alpha']);
    for (const m of ['pauseQueue', 'resumeQueue', 'closeQueue', 'openQueue', 'deleteQueue']) {
      const r = await gql(url, `mutation { ${m}(name: "gql-q") { name paused status } }`);
      expect(r.errors, m).toBeUndefined();
    }
    const upd = await gql(url, 'mutation { updateQueue(name: "alpha", input: {description: "via graphql"}) { description } }');
    expect(upd.data).toEqual({ updateQueue: { description: 'via graphql' } });
    const badCursor = await gql(url, '{ queues(after: "nonsense") { totalCount } }');
    expect(badCursor.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    // Field errors name where in the document they arose (lines counted across CRLF, LF and CR), with their path.
    const located = await gql(url, '{\r\n  a: queue(name: "alpha") { name }\n\r  b: queue(name: "nope") { name }\n}');
    expect(located.data).toBeNull(); // queue is non-null: the error reaches the root
    expect(located.errors).toEqual([{ message: 'queue "nope" not found', locations: [{ line: 4, column: 3 }], path: ['b'], extensions: { code: 'NOT_FOUND' } }]);
  });

  it('/rpc takes any method by name, batches, and skips notifications', async () => {
    const batch = [
      { jsonrpc: '2.0', method: 'getQueue', params: { name: 'alpha' }, id: 1 },
      { jsonrpc: '2.0', method: 'getQueue', params: { name: 'nope' }, id: 2 },
      { jsonrpc: '2.0', method: 'noSuchMethod', id: 3 },
      { jsonrpc: '2.0', method: 'createQueue', params: { name: 'from-notification' } },
      42,
    ];
    const r = await post(url, '/rpc', JSON.stringify(batch));
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(4);
    expect(r.body[0]).toMatchObject({ id: 1, result: { name: 'alpha' } });
    expect(r.body[1]).toMatchObject({ id: 2, error: { code: NOT_FOUND } });
    expect(r.body[2]).toMatchObject({ id: 3, error: { code: -32601 } });
    expect(r.body[3]).toMatchObject({ id: null, error: { code: -32600 } });
    expect((await rpc(url, 'getQueue', { name: 'from-notification' })).body.result.name).toBe('from-notification');
    expect((await post(url, '/rpc', '[]')).body).toMatchObject({ id: null, error: { code: -32600 } });
    const single = await post(url, '/rpc', JSON.stringify({ jsonrpc: '2.0', method: 'listQueues', id: 'x' }));
    expect(single.body.result.queues.length).toBeGreaterThan(0);
    const onlyNotification = await post(url, '/rpc', JSON.stringify({ jsonrpc: '2.0', method: 'getQueue', params: { name: 'alpha' } }));
    expect(onlyNotification.status).toBe(204);
  });
});
