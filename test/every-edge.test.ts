import { getOperationAST, parse } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';
import { seedDemoData } from '../src/identity/demo.js';
import { createApiKey } from '../src/access/api-keys.js';
import { requestIdOf } from '../src/pipeline/request-context.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { NO_WORKERS } from './helpers/gateway.js';
import { startGatewayProcess } from './helpers/process.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from './helpers/otlp-receiver.js';
import { exchange, overWs, type Exchange, type ExchangeAnswer, type TransportAnswer } from './helpers/transports.js';

// Everything one edge answers, every edge answers alike. One table of requests (legacy JSON-RPC and REST calls,
// GraphQL over POST and GET, their errors and odd shapes, with AUTH=off and AUTH=on) goes to three gateways on one
// PostgreSQL database: the default one (JSON POSTs answered on node:http), one whose every HTTP request goes through
// Yoga's edge (`edge: 'yoga'`), and a gateway process with tracing on (exporting to an OTLP receiver of the test's
// own). For each request they must give the same status line, headers and body (but for what is new per request:
// the date, generated request ids, times and ids), count it alike in /metrics and log one access line for it alike.
// Reads are sent twice (GRAPHQL_JIT_AFTER_RUNS=1: graphql-js, then compiled) and must answer the same both times. A
// GraphQL request graphql-ws can carry goes over graphql-ws too, and must get the HTTP answer's data and errors.

/** The gateways of a profile. `traced` is the process with tracing on; the others run in this process. */
const EDGES = ['node', 'yoga', 'traced'] as const;
type Edge = (typeof EDGES)[number];

interface GraphQLParams {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

interface Row {
  name: string;
  request: Exchange;
  /** A read: sent twice, graphql-js answers the first and the compiled operation the second. */
  twice?: boolean;
  /** The same operation over graphql-ws (the key and X-IdpScopes of `request` on the upgrade request). */
  ws?: GraphQLParams;
}

// Requests are templates: `@door` becomes a name of each edge's own, all of one length (`door-n`, `door-nw` for
// graphql-ws on the node edge...), so that writes on one database do not meet (queue names, request ids), and turns
// back into `@door` in the answers; `@admin` and `@reader` become the profile's API keys.
const DOOR_NAME = /door-[nyt]w?/g;
const doorName = (edge: Edge, ws = false) => `door-${edge[0]}${ws ? 'w' : ''}`;

const JSON_TYPE = { 'content-type': 'application/json' };
const GR = 'application/graphql-response+json';
const rpcBody = (method: string, params: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', method, params, id });
const BIG = 'x'.repeat(5000);
/** Headers graphql-ws carries as well (on the upgrade request): the caller's. */
const CALLER_HEADERS = new Set(['authorization', 'x-api-key', 'x-idpscopes', 'x-request-id']);
/** Headers that leave a request one graphql-ws can carry: the caller's, and an Accept of a JSON answer. */
const sameOverWs = (name: string, value: string | string[]) => CALLER_HEADERS.has(name) || (name === 'accept' && (value === GR || value === 'application/json'));

function post(name: string, path: string, body: string | undefined, headers: Record<string, string | string[]> = JSON_TYPE, extra: Partial<Row> & { chunked?: boolean } = {}): Row {
  const { chunked, ...rest } = extra;
  return { name, request: { method: 'POST', path, headers, ...(body !== undefined && { body }), ...(chunked && { chunked }) }, ...rest };
}
function get(name: string, path: string, headers: Record<string, string | string[]> = {}, extra: Partial<Row> = {}): Row {
  return { name, request: { method: 'GET', path, headers }, ...extra };
}
function rpc(name: string, method: string, params: unknown, extra: { path?: string; id?: unknown; headers?: Record<string, string | string[]>; twice?: boolean } = {}): Row {
  return post(name, extra.path ?? `/${method}`, rpcBody(method, params, extra.id), { ...JSON_TYPE, ...extra.headers }, extra.twice ? { twice: true } : {});
}
/**
 * A JSON POST to /graphql. When the body is plain parameters and the headers only name the caller (or ask for a JSON
 * answer), graphql-ws carries it too; a query (not a mutation) is sent twice.
 */
function graphql(name: string, body: Record<string, unknown>, headers: Record<string, string | string[]> = {}): Row {
  const plain = Object.keys(body).every((k) => ['query', 'variables', 'operationName'].includes(k)) && typeof body.query === 'string';
  const callerOnly = Object.entries(headers).every(([h, v]) => sameOverWs(h, v));
  const selected = operationType(body.query, body.operationName);
  // A subscription over graphql-ws streams, where a JSON POST refuses it: not the same request.
  const ws = plain && callerOnly && selected !== 'subscription' ? (body as unknown as GraphQLParams) : undefined;
  const twice = selected === 'query';
  return post(name, '/graphql', JSON.stringify(body), { ...JSON_TYPE, ...headers }, { ...(ws && { ws }), ...(twice && { twice }) });
}
const graphqlGet = (name: string, params: Record<string, string>, headers: Record<string, string> = {}) =>
  get(name, `/graphql?${new URLSearchParams(params).toString()}`, headers, { twice: operationType(params.query, params.operationName) === 'query' });

/**
 * The type of the operation a request selects; 'query' too when it selects none or does not parse (nothing runs, so
 * it may be sent twice).
 */
function operationType(query: unknown, operationName: unknown): string {
  if (typeof query !== 'string') return 'query';
  try {
    return getOperationAST(parse(query), typeof operationName === 'string' && operationName !== '' ? operationName : undefined)?.operation ?? 'query';
  } catch {
    return 'query';
  }
}

/** Six fields deep (GRAPHQL_MAX_DEPTH below), and seven. */
const SIX_DEEP = '{ person(oid: "1000000001") { organizations { organization { members { person { oid } } } } } }';
const SEVEN_DEEP = '{ person(oid: "1000000001") { organizations { organization { members { person { organizations { chief } } } } } } }';

const QUEUE_FIELDS = '{ name rate labels status paused createTime }';
const ACCEPTS = [
  '',
  '*/*',
  'application/json',
  GR,
  `application/json, ${GR}`,
  `${GR}, application/json`,
  'application/*',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  `${GR};charset=latin1, application/json`,
  'text/event-stream',
  'text/event-stream, application/json',
  'multipart/mixed',
  'text/html',
  'APPLICATION/JSON',
  'application/json;q=0.1, text/event-stream',
];

/** AUTH=off: every way in, every kind of refusal the edges make before and after the operation. */
const OPEN_ROWS: Row[] = [
  // Legacy JSON-RPC.
  rpc('create a queue', 'createQueue', { name: 'q-@door', rate: 3, labels: ['a'] }),
  rpc('read it', 'getQueue', { name: 'q-@door' }, { id: 'r', twice: true }),
  rpc('read a missing one', 'getQueue', { name: 'absent' }, { twice: true }),
  rpc('a list', 'listQueues', { pageSize: 5 }, { twice: true }),
  rpc('bad params', 'getQueue', { name: 7, extra: true }),
  rpc('a NUL in params', 'getQueue', { name: 'a\u0000b' }),
  rpc('a method naming another path', 'deleteQueue', { name: 'x' }, { path: '/getQueue' }),
  rpc('a write refused (conflict)', 'createQueue', { name: 'q1', rate: 1 }),
  post('not JSON', '/getQueue', '{"jsonrpc":'),
  post('an empty body', '/getQueue', ''),
  post('a JSON array on a single path', '/getQueue', '[]'),
  post('text/plain', '/getQueue', rpcBody('getQueue', { name: 'x' }), { 'content-type': 'text/plain' }),
  post('no content type', '/getQueue', rpcBody('getQueue', { name: 'x' }), {}),
  post('over MAX_BODY_BYTES, declared', '/getQueue', rpcBody('getQueue', { name: BIG })),
  post('over MAX_BODY_BYTES, chunked', '/getQueue', rpcBody('getQueue', { name: BIG }), JSON_TYPE, { chunked: true }),
  post('a chunked body within the limit', '/getQueue', rpcBody('getQueue', { name: 'q-@door' }), JSON_TYPE, { chunked: true }),
  rpc('a sane X-Request-Id', 'getQueue', { name: 'absent' }, { headers: { 'x-request-id': 'caller-@door.1' } }),
  rpc('an insane X-Request-Id', 'getQueue', { name: 'absent' }, { headers: { 'x-request-id': 'a b' } }),
  post('/rpc: one call', '/rpc', rpcBody('getQueue', { name: 'q1' })),
  post(
    '/rpc: a batch with a notification and an unknown method',
    '/rpc',
    JSON.stringify([{ jsonrpc: '2.0', method: 'getQueue', params: { name: 'q-@door' }, id: 1 }, { jsonrpc: '2.0', method: 'getQueue', params: { name: 'x' } }, { method: 'nope', id: 3 }]),
  ),
  post('/rpc: a notification only', '/rpc', JSON.stringify({ jsonrpc: '2.0', method: 'getQueue', params: { name: 'x' } })),
  post('/rpc: an empty batch', '/rpc', '[]'),
  post('/rpc: not JSON', '/rpc', '[{'),
  // Legacy REST.
  get('REST: a read', '/api/data/getPersonById?oid=1000000001', {}, { twice: true }),
  get('REST: a bad query', '/api/data/getPersonById?oid=&oid=2'),
  get('REST: path parameters', '/v1/type/DOCUMENT/ids/not-a-uuid?pageSize=5'),
  { name: 'REST: a write with a bad body', request: { method: 'PUT', path: '/v1/type/DOCUMENT/ids/00000000-0000-4000-8000-000000000000', headers: JSON_TYPE, body: '{"a":' } },
  { name: 'REST: a GET with a text body', request: { method: 'GET', path: '/api/data/getPersonById?oid=1', headers: { 'content-type': 'text/plain' }, body: 'hello' } },
  // Paths and methods no route takes, and what the browser rules refuse.
  get('a JSON-RPC path over GET', '/getQueue'),
  { name: 'a JSON-RPC path over PUT', request: { method: 'PUT', path: '/createQueue', headers: JSON_TYPE, body: '{}' } },
  get('an unknown path', '/nope'),
  post('an unknown path, POST', '/nope', '{}'),
  { name: '/graphql over DELETE', request: { method: 'DELETE', path: '/graphql' } },
  get('/healthz', '/healthz'),
  rpc('a foreign Origin', 'getQueue', { name: 'x' }, { headers: { origin: 'https://evil.example' } }),
  post('a dot segment', '/x/../getQueue', rpcBody('getQueue', { name: 'x' })),
  post('an escaped dot segment', '/x/%2e%2E/getQueue', rpcBody('getQueue', { name: 'x' })),
  post('a backslash in the path', '/x\\..\\getQueue', rpcBody('getQueue', { name: 'x' })),
  rpc('a Host given as an IPv4 address', 'getQueue', { name: 'q1' }, { headers: { host: '127.0.0.1' } }),
  rpc('a Host given as a bad IPv4 address', 'getQueue', { name: 'q1' }, { headers: { host: '999.1.1.1' } }),
  rpc('a Host that is not a host name', 'getQueue', { name: 'x' }, { headers: { host: 'a b' } }),
  get('a Host with a bad escape', '/api/data/getPersonById?oid=1', { host: 'x%zz' }),
  rpc('an absolute-form target', 'getQueue', { name: 'q-@door' }, { path: 'http://localhost/getQueue' }),
  rpc('an absolute-form target naming a foreign host', 'getQueue', { name: 'x' }, { path: 'http://evil.example/getQueue' }),
  rpc('a foreign Host', 'getQueue', { name: 'x' }, { headers: { host: 'evil.example' } }),
  // GraphQL over POST.
  graphql('a query', { query: `{ queue(name: "q1") ${QUEUE_FIELDS} }` }),
  graphql('a query, graphql-response+json', { query: '{ queue(name: "q1") { name } }' }, { accept: GR }),
  graphql('variables and operationName', { query: 'query A($n: String!) { queue(name: $n) { name } } query B { queues(first: 1) { totalCount } }', variables: { n: 'q1' }, operationName: 'A' }),
  graphql('a field error (NOT_FOUND)', { query: '{ queue(name: "nope") { name } }' }),
  graphql('a field error, graphql-response+json', { query: '{ queue(name: "nope") { name } }' }, { accept: GR }),
  graphql('a variable that does not coerce', { query: 'query($n: String!) { queue(name: $n) { name } }', variables: { n: 5 } }),
  graphql('a variable that does not coerce, graphql-response+json', { query: 'query($n: String!) { queue(name: $n) { name } }', variables: { n: 5 } }, { accept: GR }),
  graphql('a missing variable', { query: 'query($n: String!) { queue(name: $n) { name } }' }),
  graphql('null for a non-null variable', { query: 'query($n: String!) { queue(name: $n) { name } }', variables: { n: null } }),
  graphql('a mutation', { query: `mutation { createQueue(input: { name: "g-@door", rate: 2, labels: ["b"] }) ${QUEUE_FIELDS} }` }),
  graphql('a mutation with variables', { query: 'mutation($i: CreateQueueInput!) { createQueue(input: $i) { name rate } }', variables: { i: { name: 'v-@door', rate: 4 } } }),
  graphql('a bad input in a mutation (nothing changes)', { query: 'mutation { createQueue(input: { name: "bad name!", rate: 1 }) { name } }' }, { accept: GR }),
  graphql('a mutation that conflicts', { query: 'mutation { createQueue(input: { name: "q1", rate: 1 }) { name } }' }),
  graphql('several operations, operationName names a mutation', {
    query: 'query A { queues(first: 1) { totalCount } } mutation B { pauseQueue(name: "p-@door") { name } }',
    operationName: 'B',
  }),
  graphql('extensions and null operationName and variables', { query: '{ queues(first: 2) { totalCount } }', extensions: {}, operationName: null, variables: null }),
  graphql('a syntax error', { query: '{ queue(name: "q1") { name }' }),
  graphql('a validation error', { query: '{ queue(name: "q1") { nope } }' }, { accept: GR }),
  graphql('a validation error, application/json', { query: '{ queue(name: "q1") { nope } }' }),
  graphql('an unknown operationName', { query: 'query A { queues(first: 1) { totalCount } }', operationName: 'B' }),
  graphql('two operations, none named', { query: 'query A { queues(first: 1) { totalCount } } query B { queues(first: 1) { totalCount } }' }),
  graphql('operationName "" with one anonymous operation', { query: '{ queues(first: 1) { totalCount } }', operationName: '' }),
  graphql('operationName "" with two operations', { query: 'query A { queues(first: 1) { totalCount } } query B { queues(first: 1) { totalCount } }', operationName: '' }),
  graphql('a subscription over a JSON POST', { query: 'subscription { queueChanged(name: "q1") { name } }' }, { accept: GR }),
  graphql('variables that are not an object', { query: '{ queues(first: 1) { totalCount } }', variables: [1] }),
  graphql('a query that is not a string', { query: 5 }),
  graphql('no query', { variables: {} }),
  graphql('an unknown parameter', { query: '{ queues(first: 1) { totalCount } }', foo: 1 }),
  post('/graphql: not JSON', '/graphql', '{"query": '),
  post('/graphql: an empty body', '/graphql', ''),
  post('/graphql: a JSON array (a batch)', '/graphql', JSON.stringify([{ query: '{ __typename }' }])),
  post('/graphql: Content-Type: Application/JSON', '/graphql', JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }), { 'content-type': 'Application/JSON' }),
  post('/graphql: Content-Type with a charset', '/graphql', JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }), { 'content-type': 'application/json; charset=utf-8' }),
  post('/graphql: text/plain', '/graphql', JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }), { 'content-type': 'text/plain' }),
  post('/graphql: no content type', '/graphql', JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }), {}),
  graphql('@skip(if: $v) with $v null', { query: 'query($v: Boolean = false) { __typename queues(first: 1) @skip(if: $v) { totalCount } }', variables: { v: null } }),
  graphql('@include(if: $v) with $v null', { query: 'query($v: Boolean = true) { __typename q: queues(first: 1) @include(if: $v) { totalCount } }', variables: { v: null } }),
  graphql('@skip in a fragment, $v null', { query: 'query($v: Boolean = false) { ...F } fragment F on Query { __typename @skip(if: $v) }', variables: { v: null } }),
  graphql('@skip(if: $v) with $v given', { query: 'query($v: Boolean = false) { __typename @skip(if: $v) }', variables: { v: true } }),
  graphql('@skip(if: $v) with $v left to its default', { query: 'query($v: Boolean = true) { __typename queues(first: 1) @skip(if: $v) { totalCount } }' }),
  post('no Accept', '/graphql', JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }), JSON_TYPE, { twice: true }),
  ...ACCEPTS.map((accept) => post(`Accept: ${JSON.stringify(accept)}`, '/graphql', JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }), { ...JSON_TYPE, accept })),
  graphql('over GRAPHQL_MAX_DEPTH', { query: SEVEN_DEEP }, { accept: GR }),
  graphql('within GRAPHQL_MAX_DEPTH', { query: SIX_DEEP }),
  graphql('over GRAPHQL_MAX_COST', { query: 'query($n: Int) { queues(first: $n) { nodes { name description rate labels status paused } } }', variables: { n: 100 } }, { accept: GR }),
  graphql('over GRAPHQL_MAX_ALIASES', { query: '{ a: queues { totalCount } b: queues { totalCount } c: queues { totalCount } d: queues { totalCount } }' }),
  graphql('a page over MAX_PAGE_SIZE', { query: '{ queues(first: 101) { totalCount } }' }),
  post('/graphql: over MAX_BODY_BYTES, declared', '/graphql', JSON.stringify({ query: `{ queue(name: "${BIG}") { name } }` })),
  post('/graphql: over MAX_BODY_BYTES, chunked', '/graphql', JSON.stringify({ query: `{ queue(name: "${BIG}") { name } }` }), JSON_TYPE, { chunked: true }),
  post('/graphql: a chunked body with an X-Request-Id', '/graphql', JSON.stringify({ query: '{ queues(first: 1) { totalCount } }' }), { ...JSON_TYPE, 'x-request-id': 'chunked-@door' }, { chunked: true }),
  graphql('/graphql: an X-Request-Id', { query: '{ queue(name: "q1") { name } }' }, { 'x-request-id': 'graphql-@door.2' }),
  graphql('/graphql: a foreign Origin', { query: '{ queues(first: 1) { totalCount } }' }, { origin: 'https://evil.example' }),
  // GraphQL over GET.
  graphqlGet('GET: a query', { query: '{ queue(name: "q1") { name rate } }' }),
  graphqlGet('GET: variables and operationName', { query: 'query A($n: String!) { queue(name: $n) { name } } query B { __typename }', variables: '{"n":"q1"}', operationName: 'A' }),
  graphqlGet('GET: graphql-response+json', { query: '{ queues(first: 1) { totalCount } }' }, { accept: GR }),
  graphqlGet('GET: a mutation', { query: 'mutation { createQueue(input: { name: "get-@door", rate: 1 }) { name } }' }, { accept: GR }),
  graphqlGet('GET: a validation error', { query: '{ nope }' }),
  get('GET: no query', '/graphql', { accept: 'application/json' }),
  get('GET: GraphiQL', '/graphql', { accept: 'text/html' }),
];

/** AUTH=on: the key and the caller's X-IdpScopes, on every way in. */
const KEYED_ROWS: Row[] = [
  graphql('no key', { query: '{ queues(first: 1) { totalCount } }' }),
  graphql('no key, graphql-response+json', { query: '{ queues(first: 1) { totalCount } }' }, { accept: GR }),
  graphql('an unknown key', { query: '{ queues(first: 1) { totalCount } }' }, { authorization: 'Bearer nope' }),
  graphql('an unknown X-Api-Key', { query: '{ queues(first: 1) { totalCount } }' }, { 'x-api-key': 'nope' }),
  graphql('a key with the scope', { query: `{ queue(name: "q1") ${QUEUE_FIELDS} }` }, { authorization: 'Bearer @reader' }),
  graphql('the key as X-Api-Key', { query: '{ queues(first: 1) { totalCount } }' }, { 'x-api-key': '@reader' }),
  graphql('a key without the scope', { query: 'mutation { createQueue(input: { name: "w-@door", rate: 1 }) { name } }' }, { authorization: 'Bearer @reader' }),
  graphql('a key without the scope, graphql-response+json', { query: 'mutation { createQueue(input: { name: "w-@door", rate: 1 }) { name } }' }, { authorization: 'Bearer @reader', accept: GR }),
  graphql('an admin key writes', { query: 'mutation { createQueue(input: { name: "k-@door", rate: 1 }) { name rate } }' }, { authorization: 'Bearer @admin' }),
  graphql('X-IdpScopes once', { query: '{ person(oid: "1000000001") { oid lastName snils } }' }, { authorization: 'Bearer @admin', 'x-idpscopes': 'fullname' }),
  graphql('X-IdpScopes twice', { query: '{ person(oid: "1000000001") { oid lastName } }' }, { authorization: 'Bearer @admin', 'x-idpscopes': ['fullname', 'snils'] }),
  graphql('an unknown X-IdpScopes scope', { query: '{ person(oid: "1000000001") { oid } }' }, { authorization: 'Bearer @admin', 'x-idpscopes': 'nonsense' }),
  graphql('a validation error with a key', { query: '{ nope }' }, { authorization: 'Bearer @reader' }),
  post('/graphql: not JSON, no key', '/graphql', '{"query": '),
  post('/graphql: over MAX_BODY_BYTES, no key', '/graphql', JSON.stringify({ query: `{ queue(name: "${BIG}") { name } }` })),
  post('/graphql: over MAX_BODY_BYTES, with a key', '/graphql', JSON.stringify({ query: `{ queue(name: "${BIG}") { name } }` }), { ...JSON_TYPE, authorization: 'Bearer @reader' }),
  graphqlGet('GET: no key', { query: '{ queues(first: 1) { totalCount } }' }),
  graphqlGet('GET: a key', { query: '{ queues(first: 1) { totalCount } }' }, { authorization: 'Bearer @reader' }),
  rpc('legacy: no key', 'getQueue', { name: 'q1' }),
  rpc('legacy: an unknown key', 'getQueue', { name: 'q1' }, { headers: { authorization: 'Bearer nope' } }),
  rpc('legacy: a key with the scope', 'getQueue', { name: 'q1' }, { headers: { authorization: 'Bearer @reader' }, twice: true }),
  rpc('legacy: a key without the scope', 'createQueue', { name: 'lw-@door', rate: 1 }, { headers: { authorization: 'Bearer @reader' } }),
  rpc('legacy: an admin key writes', 'createQueue', { name: 'lk-@door', rate: 1 }, { headers: { 'x-api-key': '@admin' } }),
  rpc('legacy: X-IdpScopes twice', 'getQueue', { name: 'q1' }, { headers: { authorization: 'Bearer @reader', 'x-idpscopes': ['fullname', 'snils'] } }),
  post('legacy: not JSON, no key', '/getQueue', '{"jsonrpc":'),
  post('legacy: over MAX_BODY_BYTES, no key', '/getQueue', rpcBody('getQueue', { name: BIG })),
  post('/rpc: a batch, no key', '/rpc', JSON.stringify([{ jsonrpc: '2.0', method: 'getQueue', params: { name: 'q1' }, id: 1 }])),
  post(
    '/rpc: a batch, one call allowed and one refused',
    '/rpc',
    JSON.stringify([{ jsonrpc: '2.0', method: 'getQueue', params: { name: 'q1' }, id: 1 }, { jsonrpc: '2.0', method: 'createQueue', params: { name: 'b-@door', rate: 1 }, id: 2 }]),
    { ...JSON_TYPE, authorization: 'Bearer @reader' },
  ),
  get('REST: no key', '/api/data/getPersonById?oid=1000000001'),
  get('REST: a key without the scope', '/api/data/getPersonById?oid=1000000001', { authorization: 'Bearer @reader' }),
  get('REST: an admin key', '/api/data/getPersonById?oid=1000000001', { authorization: 'Bearer @admin' }, { twice: true }),
  get('/metrics: no key', '/metrics'),
  get('/metrics: a key without metrics:read', '/metrics', { authorization: 'Bearer @reader' }),
  get('an unknown path, no key', '/nope'),
];

/**
 * Cases answered differently by the edges, each with what differs, run with it.fails so that the table says so (a
 * case that starts to answer alike fails until it is taken out). Empty since every edge runs the one pipeline.
 */
const OVER_WS = 'over graphql-ws';
const DIVERGES_ON_MAIN: Record<string, string> = {
};

const COMMON_ENV = {
  ...NO_WORKERS,
  LOG_LEVEL: 'info',
  GRAPHIQL: 'on',
  OUTBOUND_ALLOW: '127.0.0.1',
  MAX_BODY_BYTES: '4096',
  GRAPHQL_MAX_DEPTH: '6',
  GRAPHQL_MAX_ALIASES: '3',
  GRAPHQL_MAX_COST: '600',
  GRAPHQL_UNPAGED_LIST_SIZE: '2',
  MAX_PAGE_SIZE: '100',
  GRAPHQL_JIT_AFTER_RUNS: '1',
  RATE_LIMIT_PER_MINUTE: '100000',
};

const PROFILES: { name: string; env: Record<string, string>; rows: Row[] }[] = [
  { name: 'AUTH=off', env: { AUTH: 'off' }, rows: OPEN_ROWS },
  { name: 'AUTH=on', env: { AUTH: 'on' }, rows: KEYED_ROWS },
];

type Line = Record<string, unknown>;
interface Door {
  url: string;
  /** Every JSON line the gateway logged so far. */
  lines: Line[];
  /** What /metrics shows of the counters compared (read from the registry in this process, over HTTP from the other). */
  metrics(): Promise<string>;
  /** The counters after the last row, while nothing else has run on the gateway since (graphql-ws counts operations). */
  counted?: Map<string, number>;
}

/** What the file started, closed after its tests: gateways first, then what they use (receivers, databases). */
const stops: (() => Promise<unknown>)[] = [];
const drops: (() => Promise<unknown>)[] = [];

/** The three gateways of a profile on one fresh PostgreSQL database, with demo identity data and the queue q1. */
async function startEdges(env: Record<string, string>) {
  const db: FreshDatabase = await freshDatabase('postgres');
  drops.push(() => db.drop());
  const receiver: OtlpReceiver = await startOtlpReceiver();
  drops.push(() => receiver.close());
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', ...COMMON_ENV, ...env, ...db.env });
  const inProcess = async (edge: 'node' | 'yoga') => {
    const lines: Line[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Line) });
    // The first applies the migrations; the others find none pending.
    const gateway = await startGateway(edge === 'node' ? config : { ...config, MIGRATE_ON_START: false }, { log, edge });
    stops.push(() => gateway.close());
    return { gateway, lines };
  };
  const node = await inProcess('node');
  // Spans are exported every 100 ms, so the test can see the table's requests traced.
  const traced = startGatewayProcess({ ...COMMON_ENV, ...env, ...db.env, MIGRATE_ON_START: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
  stops.push(() => traced.stop());
  const [yoga, tracedUrl] = await Promise.all([inProcess('yoga'), traced.url]);
  await seedDemoData(node.gateway.database.prisma);
  const { key: admin } = await createApiKey(node.gateway.services.db, { name: 'every-edge admin', scopes: ['admin:all'] });
  const { key: reader } = await createApiKey(node.gateway.services.db, { name: 'every-edge reader', scopes: ['queues:read'] });
  const created = await exchange(node.gateway.url, { method: 'POST', path: '/createQueue', headers: { ...JSON_TYPE, authorization: `Bearer ${admin}` }, body: rpcBody('createQueue', { name: 'q1', rate: 2, labels: ['a'] }) });
  expect(created.body).toContain('"name":"q1"');
  const fromRegistry = (g: Gateway) => async () => (await Promise.all(COUNTERS.map((name) => g.services.metrics.registry.getSingleMetricAsString(name)))).join('\n');
  const doors: Record<Edge, Door> = {
    node: { url: node.gateway.url, lines: node.lines, metrics: fromRegistry(node.gateway) },
    yoga: { url: yoga.gateway.url, lines: yoga.lines, metrics: fromRegistry(yoga.gateway) },
    traced: { url: tracedUrl, lines: traced.logLines, metrics: async () => (await fetch(`${tracedUrl}/metrics`, { headers: { authorization: `Bearer ${admin}` } })).text() },
  };
  return { doors, keys: { admin, reader }, receiver };
}
type Edges = Awaited<ReturnType<typeof startEdges>>;

// Both profiles' gateways start side by side (each mostly waits: migrations, the gateway process's start-up).
const started: Record<string, Edges> = {};
beforeAll(async () => {
  const all = await Promise.allSettled(PROFILES.map(async (p) => (started[p.name] = await startEdges(p.env))));
  for (const one of all) if (one.status === 'rejected') throw one.reason;
});
afterAll(async () => {
  await Promise.allSettled(stops.map((stop) => stop()));
  await Promise.allSettled(drops.map((drop) => drop()));
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;
const blank = (text: string) => text.replace(DOOR_NAME, '@door').replace(ISO, '<time>').replace(UUID, '<uuid>');

/** What must be alike of an answer: all of it but the date, and a request id the gateway made up. */
function comparable(a: ExchangeAnswer, givenId: string | undefined) {
  const { date, ...headers } = a.headers;
  expect(date).toBeDefined();
  const id = headers['x-request-id'];
  if (givenId) expect(id, 'the caller\'s X-Request-Id echoed').toBe(givenId);
  else expect(id, 'a request id made up').toMatch(new RegExp(`^${UUID.source}$`));
  return { status: `${a.status} ${a.statusText}`, headers: JSON.parse(blank(JSON.stringify({ ...headers, 'x-request-id': givenId ?? '<new>' }))) as unknown, body: blank(a.body) };
}

const COUNTERS = ['gateway_http_requests_total', 'gateway_http_request_duration_seconds', 'gateway_graphql_operations_total', 'gateway_rejected_total'];
const COUNTED = new RegExp(`^(${COUNTERS.join('|')})(_count)?\\{`);

/** The counters of /metrics' text (HTTP requests by path and status, operations, refusals), but /metrics' own. */
function counters(text: string): Map<string, number> {
  const counted = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!COUNTED.test(line) || line.includes('path="/metrics"')) continue;
    const at = line.lastIndexOf(' ');
    counted.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return counted;
}
const countedSince = (before: Map<string, number>, after: Map<string, number>) =>
  Object.fromEntries([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]).filter(([, v]) => v !== 0));

/** The access lines logged for a request id (the gateway process writes them a moment after it answers). */
async function accessLines(door: Door, requestId: string, expected: number): Promise<Line[]> {
  const find = () => door.lines.filter((l) => l.msg === 'request' && l.requestId === requestId);
  for (let waited = 0; find().length < expected && waited < 2000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  return find();
}

/** What graphql-ws must answer for the HTTP answer `a` (parsed body): its data and errors, or a refused socket. */
function overWsView(a: TransportAnswer): unknown {
  if (a.closeCode !== undefined && a.closeCode !== 1000) return { closed: a.closeCode };
  return JSON.parse(blank(JSON.stringify(a.results[0] ?? null))) as unknown;
}
function httpViewForWs(status: number, body: string): unknown {
  // graphql-ws settles the caller at connection_init: no key is a 4403 close, a bad X-IdpScopes a 4400 close (one sent
  // twice, which HTTP refuses with 400, or one naming an unknown scope, which HTTP refuses where identity data is read).
  if (status === 401) return { closed: 4403 };
  const parsed = JSON.parse(body) as { data?: unknown; errors?: { message?: string; extensions?: { code?: string } }[] };
  if (status === 400 && parsed.errors?.[0]?.extensions?.code === 'BAD_REQUEST' && parsed.data === undefined) return { closed: 4400 };
  if (parsed.errors?.some((e) => e.extensions?.code === 'BAD_USER_INPUT' && e.message?.includes('X-IdpScopes'))) return { closed: 4400 };
  return JSON.parse(blank(JSON.stringify({ ...(parsed.data !== undefined && { data: parsed.data }), ...(parsed.errors && { errors: parsed.errors }) }))) as unknown;
}

/** A JSON body parsed (compiled execution writes `data` before `errors`, graphql-js after), or the text as it is. */
function parsedBody(answer: ReturnType<typeof comparable>): unknown {
  try {
    return { ...answer, body: JSON.parse(answer.body) as unknown };
  } catch {
    return answer;
  }
}

it('DIVERGES_ON_MAIN names tests of the table, each once', () => {
  const names = PROFILES.flatMap((p) => p.rows.flatMap((r) => [r.name, ...(r.ws ? [`${r.name} ${OVER_WS}`] : [])]));
  expect(new Set(names).size, 'row names are unique').toBe(names.length);
  expect(Object.keys(DIVERGES_ON_MAIN).filter((test) => !names.includes(test))).toEqual([]);
});

describe.each(PROFILES)('every edge answers alike ($name)', ({ name, rows }) => {
  let edges: Edges;
  beforeAll(() => {
    edges = started[name]!;
  });

  const fill = (text: string, door: string) => text.replaceAll('@door', door).replaceAll('@admin', edges.keys.admin).replaceAll('@reader', edges.keys.reader);
  const filled = (e: Exchange, door: string): Exchange => ({
    ...e,
    path: fill(e.path, door),
    ...(e.headers && { headers: JSON.parse(fill(JSON.stringify(e.headers), door)) as Record<string, string | string[]> }),
    ...(e.body !== undefined && { body: fill(e.body, door) }),
  });

  /** The row on one edge: its answers (twice for a read), what /metrics counted and the access lines. */
  async function onEdge(row: Row, edge: Edge) {
    const door = edges.doors[edge];
    const request = filled(row.request, doorName(edge));
    const given = request.headers?.['x-request-id'];
    const givenId = typeof given === 'string' && requestIdOf(given) === given ? given : undefined;
    const before = door.counted ?? counters(await door.metrics());
    door.counted = undefined; // until this row's requests are all answered
    const answers: ExchangeAnswer[] = [await exchange(door.url, request)];
    if (row.twice) answers.push(await exchange(door.url, request));
    door.counted = counters(await door.metrics());
    const counted = countedSince(before, door.counted);
    // One access line per request, found by the id it was answered with.
    const lines: unknown[] = [];
    for (const id of new Set(answers.map((a) => String(a.headers['x-request-id'])))) {
      const found = await accessLines(door, id, answers.filter((a) => a.headers['x-request-id'] === id).length);
      lines.push(...found.map((l) => ({ method: l.method, path: blank(String(l.path)), status: l.status })));
    }
    if (edge === 'traced' && Object.keys(counted).some((k) => k.startsWith('gateway_graphql_operations_total'))) {
      for (const a of answers) tracedOperations.set(String(a.headers['x-request-id']), row.name);
    }
    const [first, ...again] = answers.map((a) => comparable(a, givenId));
    return { first: first!, again, counted, lines, raw: answers[0]! };
  }

  /** The request ids the traced gateway answered requests that ran an operation with, and their rows. */
  const tracedOperations = new Map<string, string>();
  /** The node edge's first answer to each row, for graphql-ws to be compared with. */
  const httpAnswers = new Map<string, ExchangeAnswer>();

  async function overEdges(row: Row) {
    // The edges are separate gateways and the door names keep their writes apart: they take the row side by side.
    const answered = await Promise.all(EDGES.map((edge) => onEdge(row, edge)));
    const seen = Object.fromEntries(EDGES.map((edge, i) => [edge, answered[i]!])) as Record<Edge, (typeof answered)[number]>;
    httpAnswers.set(row.name, seen.node.raw);
    const alike = (edge: Edge) => ({ answer: seen[edge].first, counted: seen[edge].counted, accessLines: seen[edge].lines });
    expect({ yoga: alike('yoga'), traced: alike('traced') }).toEqual({ yoga: alike('node'), traced: alike('node') });
    for (const edge of EDGES) {
      expect(seen[edge].lines, `${edge}: one access line per request`).toHaveLength(seen[edge].again.length + 1);
      for (const again of seen[edge].again) expect(parsedBody(again), `${edge}: the second run (compiled) answers as the first`).toEqual(parsedBody(seen[edge].first));
    }
  }

  async function overWebSocket(row: Row, ws: GraphQLParams) {
    const http = httpAnswers.get(row.name);
    expect(http, 'the HTTP answer this is compared with').toBeDefined();
    for (const edge of EDGES) edges.doors[edge].counted = undefined;
    const expected = httpViewForWs(http!.status, http!.body);
    const answers = await Promise.all(
      EDGES.map((edge) => {
        const door = doorName(edge, true);
        const headers = Object.fromEntries(Object.entries(filled(row.request, door).headers ?? {}).filter(([h]) => CALLER_HEADERS.has(h) && h !== 'x-request-id'));
        const variables = JSON.parse(fill(JSON.stringify(ws.variables ?? {}), door)) as Record<string, unknown>;
        return overWs(edges.doors[edge].url, fill(ws.query, door), variables, { headers, ...(ws.operationName !== undefined && { operationName: ws.operationName }) });
      }),
    );
    expect(Object.fromEntries(EDGES.map((edge, i) => [edge, overWsView(answers[i]!)]))).toEqual(Object.fromEntries(EDGES.map((edge) => [edge, expected])));
  }

  const diverges = (test: string) => Object.hasOwn(DIVERGES_ON_MAIN, test);
  for (const row of rows) {
    (diverges(row.name) ? it.fails : it)(row.name, () => overEdges(row));
    const ws = row.ws;
    if (ws) {
      const name = `${row.name} ${OVER_WS}`;
      (diverges(name) ? it.fails : it)(name, () => overWebSocket(row, ws));
    }
  }

  it('the traced gateway traced the operations of the table: a server span with its request id for each', async () => {
    const spans = edges.receiver.spans;
    const untraced = () => {
      const traced = new Set(spans.filter((s) => s.kind === SPAN_KIND.SERVER).map((s) => s.attributes['gateway.request_id']));
      return [...tracedOperations].filter(([id]) => !traced.has(id)).map(([, row]) => row);
    };
    for (let waited = 0; untraced().length > 0 && waited < 3000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(tracedOperations.size).toBeGreaterThan(rows.length / 4);
    expect(untraced()).toEqual([]);
  });
});
