import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { DATABASES, freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { NO_WORKERS, post, rpc } from './helpers/gateway.js';
import { overHttp, overSse, overWs } from './helpers/transports.js';
const LONE_SURROGATE_MESSAGE = 'must not contain a lone UTF-16 surrogate (U+D800-U+DFFF without its pair)', MAX_JSON_DEPTH = 64, NUL_MESSAGE = 'must not contain the NUL character (U+0000)', TOO_DEEP_MESSAGE = 'nests objects and arrays more than 64 levels deep';

// Client input that once met an internal error (-32603, 500) or was stored altered is refused by one rule at every
// door, naming the field as the caller sent it, and changes nothing: a lone UTF-16 surrogate, a value nested deeper
// than MAX_JSON_DEPTH (a NUL at any depth within it), and legacy page numbers outside what a page can be.

const INVALID_PARAMS = -32602;
/** `{"a":{"a":...{leaf}...}}`, `levels` objects deep, as JSON text (built as text: nothing here recurses over it). */
const nestedJson = (levels: number, leaf: string) => `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`;
const pathOf = (prefix: string, levels: number) => [prefix, ...Array<string>(levels).fill('a')].join('.');
const LONE = 'a\ud800b';

describe.each(DATABASES)('input refusals on %s', (kind) => {
  let db: FreshDatabase;
  let t: { gateway: Gateway };
  let url: string;
  /** Every line the gateway logged (at debug and up): a client's mistake is never logged as an error. */
  const logged: { level: number; msg: string }[] = [];
  beforeAll(async () => {
    db = await freshDatabase(kind);
    const sink = new Writable({ write: (c, _e, done) => (logged.push(...String(c).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: number; msg: string })), done()) });
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', AUTH: 'off', MAX_PAGE_SIZE: '100', ...NO_WORKERS, ...db.env });
    t = { gateway: await startGateway(config, { log: pino({ level: 'debug' }, sink) }) };
    url = t.gateway.url;
    await rpc(url, 'createQueue', { name: 'kept', description: 'as it was' });
  }, 60_000);
  afterAll(async () => {
    await t?.gateway.close();
    await db?.drop();
  });

  const rpcText = (method: string, paramsJson: string) => post(url, `/${method}`, `{"jsonrpc":"2.0","method":"${method}","id":1,"params":${paramsJson}}`);
  const gqlText = async (query: string, variablesJson: string) => {
    const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' }, body: `{"query":${JSON.stringify(query)},"variables":${variablesJson}}` });
    return { status: res.status, body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } };
  };
  const refusedFields = (answer: { body: any }) => answer.body.error.data.fields as { field: string; message: string }[];

  it('a lone surrogate is -32602 / 400 naming the field on createQueue and updateQueue alike, through every door; nothing stored', async () => {
    const created = await rpc(url, 'createQueue', { name: 'lone', description: LONE });
    expect(created.status).toBe(200);
    expect(created.body.error).toMatchObject({ code: INVALID_PARAMS, message: expect.stringContaining('params.description'), data: { fields: [{ field: 'params.description', message: LONE_SURROGATE_MESSAGE }] } });
    const updated = await rpc(url, 'updateQueue', { name: 'kept', description: LONE });
    expect(updated.body.error).toMatchObject({ code: INVALID_PARAMS, data: { fields: [{ field: 'params.description', message: LONE_SURROGATE_MESSAGE }] } });
    const low = await rpc(url, 'updateQueue', { name: 'kept', labels: ['\udc00x'] });
    expect(refusedFields(low)).toContainEqual({ field: 'params.labels.0', message: LONE_SURROGATE_MESSAGE });

    const create = 'mutation($i: CreateQueueInput!) { createQueue(input: $i) { name } }';
    const update = 'mutation($d: String) { updateQueue(name: "kept", input: {description: $d}) { description } }';
    for (const answer of [await overHttp(url, create, { i: { name: 'lone', description: LONE } }), await overHttp(url, update, { d: LONE })]) {
      expect(answer.status).toBe(400);
      expect(answer.results[0]!.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', fields: [expect.objectContaining({ message: LONE_SURROGATE_MESSAGE })] }) })]);
    }
    const overEvents = await overSse(url, update, { d: LONE });
    expect(overEvents.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'd', message: LONE_SURROGATE_MESSAGE }] });
    const overSocket = await overWs(url, update, { d: LONE });
    expect(overSocket.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'd', message: LONE_SURROGATE_MESSAGE }] });
    const webhook = await post(url, '/v1/systems/sys-lone/webhook', JSON.stringify({ url: 'http://example.test/hook', body: { note: LONE } }));
    expect(webhook.status).toBe(400);
    expect(webhook.body).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', fields: [{ field: 'body.body.note', message: LONE_SURROGATE_MESSAGE }] });

    const db = t.gateway.services.db;
    expect(await db.queue.findUnique({ where: { name: 'lone' } })).toBeNull();
    expect((await db.queue.findUniqueOrThrow({ where: { name: 'kept' } })).description).toBe('as it was');
    expect(await db.notification.count({ where: { systemId: 'sys-lone' } })).toBe(0);
    // A surrogate pair is one character, stored as it is.
    expect((await rpc(url, 'updateQueue', { name: 'kept', description: 'as it was \ud83d\ude00' })).body.result.description).toBe('as it was \ud83d\ude00');
    await rpc(url, 'updateQueue', { name: 'kept', description: 'as it was' });
  });

  it(`a value nested deeper than ${MAX_JSON_DEPTH} levels is -32602 / 400 naming the field (5,000 deep too), a NUL at any depth within the bound too; nothing stored`, async () => {
    const task = (payload: string) => `{"queueName":"kept","name":"deep","target":{"url":"http://example.test/"},"payload":${payload}}`;
    const deep = await rpcText('createTask', task(nestedJson(5000, '1')));
    expect(deep.status).toBe(200);
    expect(deep.body.error).toMatchObject({ code: INVALID_PARAMS, message: expect.stringContaining('params.payload.a') });
    expect(refusedFields(deep)).toEqual([{ field: pathOf('params.payload', MAX_JSON_DEPTH - 1), message: TOO_DEEP_MESSAGE }]);
    // Just within the bound, a NUL at the bottom is found (it once reached PostgreSQL past 64 levels).
    const nul = await rpcText('createTask', task(nestedJson(MAX_JSON_DEPTH - 2, '"x\\u0000"')));
    expect(refusedFields(nul)).toEqual([{ field: pathOf('params.payload', MAX_JSON_DEPTH - 2), message: NUL_MESSAGE }]);
    const nulDeeper = await rpcText('createTask', task(nestedJson(100, '"x\\u0000"')));
    expect(refusedFields(nulDeeper)).toEqual([{ field: pathOf('params.payload', MAX_JSON_DEPTH - 1), message: TOO_DEEP_MESSAGE }]);

    const mutation = 'mutation($i: CreateTaskInput!) { createTask(input: $i) { name } }';
    const overGraphQL = await gqlText(mutation, `{"i":${task(nestedJson(5000, '1'))}}`);
    expect(overGraphQL.status).toBe(400);
    expect(overGraphQL.body.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: pathOf('i.payload', MAX_JSON_DEPTH - 2), message: TOO_DEEP_MESSAGE }] });
    const overSocket = await overWs(url, mutation, { i: JSON.parse(task(nestedJson(300, '1'))) as Record<string, unknown> });
    expect(overSocket.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ message: TOO_DEEP_MESSAGE }] });
    const webhook = await post(url, '/v1/systems/sys-deep/webhook', `{"url":"http://example.test/hook","body":${nestedJson(5000, '1')}}`);
    expect(webhook.status).toBe(400);
    expect(webhook.body).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: pathOf('body.body', MAX_JSON_DEPTH - 1), message: TOO_DEEP_MESSAGE }] });

    // Within the bound the value is stored whole.
    const fits = await rpcText('createTask', task(nestedJson(MAX_JSON_DEPTH - 1, '1')));
    expect(fits.body.result).toMatchObject({ name: 'deep' });
    const db = t.gateway.services.db;
    expect(await db.task.count({ where: { queueName: 'kept' } })).toBe(1);
    expect(await db.notification.count({ where: { systemId: 'sys-deep' } })).toBe(0);
    await rpc(url, 'deleteTask', { queueName: 'kept', name: 'deep' });
  });

  it('legacy paging refusals name params.pageSize / params.pageNumber on every list path; GraphQL names first / after', async () => {
    const lists: [string, Record<string, unknown>][] = [
      ['listQueues', {}],
      ['searchQueue', {}],
      ['searchQueueLabels', { label: 'x' }],
      ['listTasks', {}],
      ['searchTasks', {}],
      ['list', {}],
      ['search', {}],
      ['searchJobInstance', {}],
    ];
    for (const [method, params] of lists) {
      for (const [paging, field] of [
        [{ pageSize: 2 ** 31 }, 'params.pageSize'],
        [{ pageSize: 101 }, 'params.pageSize'],
        [{ pageSize: 0 }, 'params.pageSize'],
        [{ pageNumber: 2 ** 31 }, 'params.pageNumber'],
        [{ pageNumber: 1e12, pageSize: 100 }, 'params.pageNumber'],
        [{ pageNumber: -1 }, 'params.pageNumber'],
        [{ pageNumber: 1.5 }, 'params.pageNumber'],
      ] as const) {
        const answer = await rpc(url, method, { ...params, ...paging });
        expect(answer.body.error, `${method} ${JSON.stringify(paging)}`).toMatchObject({ code: INVALID_PARAMS, message: expect.stringContaining(field) });
        expect(refusedFields(answer).map((f) => f.field), `${method} ${JSON.stringify(paging)}`).toEqual([field]);
      }
      const last = await rpc(url, method, { ...params, pageSize: 100, pageNumber: 1_000_000 });
      expect(last.body.error, method).toBeUndefined();
    }
    // The REST lists name their query parameters as the spec does (stubs: pageNumber/pageSize; ESIA emps: pageSize/pageIndex).
    for (const [path, fields] of [
      ['/v1/type/DOCUMENT?pageSize=2147483648&pageNumber=2147483648', ['query.pageNumber', 'query.pageSize']],
      ['/v1/type/DOCUMENT?pageSize=1e400&pageNumber=-1', ['query.pageNumber', 'query.pageSize']],
      ['/api/data/orgs/getPersonEmplOrganizationsById?oid=1000000001&pageSize=2147483648&pageIndex=2147483648', ['query.pageIndex', 'query.pageSize']],
    ] as const) {
      const res = await fetch(`${url}${path}`);
      const body = (await res.json()) as { fields?: { field: string }[]; error?: { fields?: { field: string }[] } };
      expect(res.status, path).toBe(400);
      expect((body.fields ?? body.error?.fields ?? []).map((f) => f.field).sort(), path).toEqual(fields);
    }
    const tooMany = await overHttp(url, '{ queues(first: 101) { totalCount } }');
    expect(tooMany.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'first', message: 'at most 100' }] });
    const overflow = await overHttp(url, 'query($n: Int) { queues(first: $n) { totalCount } }', { n: 2 ** 31 });
    expect(overflow.status).toBe(400);
    expect(overflow.results[0]!.errors![0]!.message).toContain('$n');
    const cursor = await overHttp(url, '{ queues(after: "nope") { totalCount } }');
    expect(cursor.results[0]!.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'after' }] });
  });

  it('GraphQL parameters that cannot be read are 400 BAD_REQUEST on GET, a form, multipart and SSE, as on a JSON POST', async () => {
    const csrf = { 'x-graphql-yoga-csrf': '1' };
    const json = { accept: 'application/graphql-response+json' };
    const multipart = (fields: Record<string, string>) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.set(name, value);
      return form;
    };
    const cases: [string, () => Promise<Response>, string][] = [
      ['GET, variables not JSON', () => fetch(`${url}/graphql?query=%7B__typename%7D&variables=notjson`, { headers: json }), 'The "variables" parameter is not valid JSON'],
      ['GET, extensions not JSON', () => fetch(`${url}/graphql?query=%7B__typename%7D&extensions=%7Bnope`, { headers: json }), 'The "extensions" parameter is not valid JSON'],
      ['GET, variables JSON but not an object', () => fetch(`${url}/graphql?query=%7B__typename%7D&variables=5`, { headers: json }), 'Expected "variables" param to be empty or an object, but given number.'],
      ['form, variables not JSON', () => fetch(`${url}/graphql`, { method: 'POST', headers: { ...json, ...csrf, 'content-type': 'application/x-www-form-urlencoded' }, body: 'query=%7B__typename%7D&variables=nope' }), 'The "variables" parameter is not valid JSON'],
      ['multipart, operations not JSON', () => fetch(`${url}/graphql`, { method: 'POST', headers: { ...json, ...csrf }, body: multipart({ operations: 'notjson', map: '{}' }) }), 'Multipart form field "operations" must be a valid JSON string'],
      ['multipart, map not JSON', () => fetch(`${url}/graphql`, { method: 'POST', headers: { ...json, ...csrf }, body: multipart({ operations: '{"query":"{ __typename }"}', map: 'nope' }) }), 'Multipart form field "map" must be a valid JSON string'],
      ['multipart, no operations', () => fetch(`${url}/graphql`, { method: 'POST', headers: { ...json, ...csrf }, body: multipart({ map: '{}' }) }), 'Missing multipart form field "operations"'],
      ['JSON POST, variables a string', () => fetch(`${url}/graphql`, { method: 'POST', headers: { ...json, 'content-type': 'application/json' }, body: '{"query":"{ __typename }","variables":"notjson"}' }), 'Expected "variables" param to be empty or an object, but given string.'],
    ];
    for (const [name, send, message] of cases) {
      const res = await send();
      const body = (await res.json()) as { errors: { message: string; extensions?: { code?: string } }[] };
      expect({ name, status: res.status, code: body.errors[0]!.extensions?.code }).toEqual({ name, status: 400, code: 'BAD_REQUEST' });
      expect(body.errors[0]!.message).toContain(message);
    }
    // Over SSE, as every refusal there: a 200 stream carrying the error.
    const sse = await fetch(`${url}/graphql?query=%7B__typename%7D&variables=notjson`, { headers: { accept: 'text/event-stream' } });
    expect(sse.status).toBe(200);
    const events = await sse.text();
    expect(events).toContain('"code":"BAD_REQUEST"');
    expect(events).toContain('event: complete');
    expect(logged.filter((line) => line.msg === 'GraphQL parameters refused').length).toBeGreaterThanOrEqual(7);
  });

  it('none of these refusals was logged as a warning or an error', () => {
    const startup = /authentication is OFF/; // the one warning AUTH=off gives at start
    expect(logged.filter((line) => line.level >= 40 && !startup.test(line.msg)).map((line) => line.msg)).toEqual([]);
    expect(logged.some((line) => line.msg === 'request')).toBe(true);
  });
});
