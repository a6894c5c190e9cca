import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { parse, getOperationAST } from 'graphql';
import { generate } from '@graphql-codegen/cli';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startGateway, type Gateway } from '../src/app.js';
import { buildSchema } from '../src/schema/schema.js';
import { loadTrustedDocuments } from '../src/pipeline/trusted-documents.js';
import { parseTrustedDocumentsPolicy } from '../src/kit/trusted-documents-policy.js';
import { startTestGateway, NO_WORKERS, type TestGateway } from './helpers/gateway.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { bearer, makeKey } from './helpers/keys.js';
import { getParams, postParams, sseParams, wsParams, type TransportAnswer } from './helpers/transports.js';
import { watchSubscriptions } from './helpers/subscriptions.js';

// Trusted (persisted) documents, as a front end ships them: codegen's client preset writes the manifest
// (persisted-documents.json) from the front end's operations, the gateway loads it, and a request names a document by
// its id. The same table runs over every transport a client may use (a JSON POST, GET, server-sent events over POST
// and GET, graphql-ws), for a caller the policy holds to the manifest and for one it does not.

const ROOT = resolve(import.meta.dirname, '..');

const OPERATIONS = `
query Queues($first: Int!) {
  queues(first: $first) { totalCount }
}
mutation PauseQueue($name: String!) {
  pauseQueue(name: $name) { name paused }
}
subscription QueueChanged($name: String!) {
  queueChanged(name: $name) { name paused }
}
`;

/** Runs codegen's client preset with persisted documents on OPERATIONS, as a front end's build does. */
async function generateManifest(dir: string): Promise<{ path: string; ids: Record<string, string> }> {
  writeFileSync(join(dir, 'operations.graphql'), OPERATIONS);
  await generate(
    {
      schema: join(ROOT, 'schema.graphql'),
      documents: [join(dir, 'operations.graphql')],
      silent: true,
      generates: { [`${join(dir, 'gql')}/`]: { preset: 'client', presetConfig: { persistedDocuments: true, fragmentMasking: false } } },
    },
    true,
  );
  const path = join(dir, 'gql', 'persisted-documents.json');
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
  const ids = Object.fromEntries(Object.entries(manifest).map(([id, text]) => [getOperationAST(parse(text))!.name!.value, id]));
  return { path, ids };
}

type Send = (url: string, params: Record<string, unknown>, headers?: Record<string, string>) => Promise<TransportAnswer>;

/** Every transport, each sending the same parameters its own way (graphql-ws: the key in connection_init). */
const TRANSPORTS: Record<string, Send> = {
  POST: postParams,
  GET: getParams,
  'SSE (POST)': (url, params, headers = {}) => sseParams(url, params, headers),
  'SSE (GET)': (url, params, headers = {}) => getParams(url, params, { ...headers, accept: 'text/event-stream' }),
  'graphql-ws': (url, params, headers = {}) => wsParams(url, { query: '', ...params }, { init: headers }),
};
const transports = Object.keys(TRANSPORTS);

/** A refusal as each transport carries it: 400 over HTTP, in the stream over SSE (200), an `error` message over graphql-ws. */
function expectRefused(transport: string, answer: TransportAnswer, code: string) {
  const error = answer.results[0]?.errors?.[0];
  expect(error?.extensions?.code, JSON.stringify(answer)).toBe(code);
  expect(answer.status).toBe(transport === 'POST' || transport === 'GET' ? 400 : 200);
  if (transport === 'graphql-ws') expect(error?.extensions).not.toHaveProperty('http');
}

function expectData(answer: TransportAnswer, data: unknown) {
  expect(answer.results, JSON.stringify(answer)).toEqual([{ data }]);
  expect(answer.status).toBe(200);
}

const unknownId = `sha256:${createHash('sha256').update('query { queues(first: 1) { totalCount } }').digest('hex')}`;

let dir: string;
let manifest: { path: string; ids: Record<string, string> };
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trusted-documents-'));
  manifest = await generateManifest(dir);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('AUTH=off, TRUSTED_DOCUMENTS=anonymous: a caller without a key runs listed documents only, a key anything', () => {
  let t: TestGateway;
  let key: string;
  const queues = () => ({ documentId: manifest.ids.Queues, variables: { first: 1 } });
  beforeAll(async () => {
    t = await startTestGateway('pglite', { ...NO_WORKERS, TRUSTED_DOCUMENTS: 'anonymous', TRUSTED_DOCUMENTS_MANIFESTS: manifest.path });
    key = await makeKey(t, ['queues:read', 'queues:write']);
    const created = await postParams(t.url, { query: 'mutation { createQueue(input: { name: "q1", rate: 1 }) { name } }' }, bearer(key));
    expect(created.results[0]!.errors).toBeUndefined();
  }, 60_000);
  afterAll(async () => t?.close());

  it.each(transports)('%s: a listed document by its id runs', async (transport) => {
    expectData(await TRANSPORTS[transport]!(t.url, queues()), { queues: { totalCount: 1 } });
  });

  it.each(transports)('%s: an id no manifest lists is PERSISTED_DOCUMENT_NOT_FOUND', async (transport) => {
    const answer = await TRANSPORTS[transport]!(t.url, { documentId: unknownId });
    expectRefused(transport, answer, 'PERSISTED_DOCUMENT_NOT_FOUND');
    expect(answer.results[0]!.errors![0]!.message).toContain(unknownId);
  });

  it.each(transports)('%s: a text from a caller without a key is PERSISTED_DOCUMENT_REQUIRED, even the text of a listed document', async (transport) => {
    for (const query of ['{ queues(first: 1) { totalCount } }', 'query Queues($first: Int!) { queues(first: $first) { totalCount } }']) {
      expectRefused(transport, await TRANSPORTS[transport]!(t.url, { query, variables: { first: 1 } }), 'PERSISTED_DOCUMENT_REQUIRED');
    }
  });

  it.each(transports)('%s: a key sends any text, and names listed documents too', async (transport) => {
    expectData(await TRANSPORTS[transport]!(t.url, { query: '{ queues(first: 1) { totalCount } }' }, bearer(key)), { queues: { totalCount: 1 } });
    expectData(await TRANSPORTS[transport]!(t.url, queues(), bearer(key)), { queues: { totalCount: 1 } });
  });

  it.each(transports)("%s: Apollo's extensions.persistedQuery.sha256Hash names a document too", async (transport) => {
    const sha256Hash = manifest.ids.Queues!.slice('sha256:'.length);
    expectData(await TRANSPORTS[transport]!(t.url, { variables: { first: 1 }, extensions: { persistedQuery: { version: 1, sha256Hash } } }), { queues: { totalCount: 1 } });
  });

  it.each(transports)('%s: a documentId beside a text is refused (400 BAD_REQUEST)', async (transport) => {
    const answer = await TRANSPORTS[transport]!(t.url, { ...queues(), query: '{ queues(first: 1) { totalCount } }' }, bearer(key));
    expectRefused(transport, answer, 'BAD_REQUEST');
    expect(answer.results[0]!.errors![0]!.message).toBe('Send either "query" or "documentId", not both.');
  });

  it('GET by id: answered no-store and varying by the caller, as every API answer (src/http/cache-policy.ts)', async () => {
    const answer = await getParams(t.url, queues());
    expect(answer.status).toBe(200);
    expect(answer.cacheControl).toBe('no-store');
    expect(answer.vary).toBe('Authorization, X-Api-Key, X-IdpScopes');
  });

  it('GET never runs a listed mutation (405, Allow: POST); POST does', async () => {
    const res = await fetch(`${t.url}/graphql?documentId=${encodeURIComponent(manifest.ids.PauseQueue!)}&variables=${encodeURIComponent('{"name":"q1"}')}`, {
      headers: { accept: 'application/graphql-response+json' },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const queue = await postParams(t.url, queues());
    expect(queue.results[0]!.data).toEqual({ queues: { totalCount: 1 } });
  });

  it('graphql-ws: a listed subscription by its id follows what a listed mutation by its id changes', async () => {
    const subscriptions = watchSubscriptions(t.gateway);
    const events = wsParams(t.url, { query: '', documentId: manifest.ids.QueueChanged, variables: { name: 'q1' } });
    await subscriptions.ready('queue', 'q1');
    const paused = await postParams(t.url, { documentId: manifest.ids.PauseQueue, variables: { name: 'q1' } });
    expect(paused.results[0]).toEqual({ data: { pauseQueue: { name: 'q1', paused: true } } });
    expect((await events).results).toEqual([{ data: { queueChanged: { name: 'q1', paused: true } } }]);
  });
});

describe('AUTH=on, TRUSTED_DOCUMENTS=all and the default (PostgreSQL), on both HTTP edges', () => {
  let db: FreshDatabase;
  let held: Gateway;
  let heldViaYoga: Gateway;
  let open: Gateway;
  let key: string;
  beforeAll(async () => {
    db = await freshDatabase('postgres');
    const env = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', AUTH: 'on', ...NO_WORKERS, ...db.env, TRUSTED_DOCUMENTS_MANIFESTS: manifest.path };
    const log = pino({ level: 'silent' });
    held = await startGateway(loadConfig({ ...env, TRUSTED_DOCUMENTS: 'all' }), { log });
    heldViaYoga = await startGateway(loadConfig({ ...env, TRUSTED_DOCUMENTS: 'all', MIGRATE_ON_START: 'off' }), { log, edge: 'yoga' });
    open = await startGateway(loadConfig({ ...env, MIGRATE_ON_START: 'off' }), { log });
    key = await makeKey({ gateway: held, url: held.url, db, close: async () => undefined }, ['queues:read']);
  }, 60_000);
  afterAll(async () => {
    await open?.close();
    await heldViaYoga?.close();
    await held?.close();
    await db?.drop();
  });

  it.each(transports)('%s, TRUSTED_DOCUMENTS=all: a key names listed documents, and its text is refused', async (transport) => {
    expectData(await TRANSPORTS[transport]!(held.url, { documentId: manifest.ids.Queues, variables: { first: 1 } }, bearer(key)), { queues: { totalCount: 0 } });
    expectRefused(transport, await TRANSPORTS[transport]!(held.url, { query: '{ queues(first: 1) { totalCount } }' }, bearer(key)), 'PERSISTED_DOCUMENT_REQUIRED');
  });

  it.each(transports)('%s, the default (token): a key sends any text (GraphiQL keeps working) and names listed documents', async (transport) => {
    expectData(await TRANSPORTS[transport]!(open.url, { query: '{ queues(first: 1) { totalCount } }' }, bearer(key)), { queues: { totalCount: 0 } });
    expectData(await TRANSPORTS[transport]!(open.url, { documentId: manifest.ids.Queues, variables: { first: 1 } }, bearer(key)), { queues: { totalCount: 0 } });
  });

  it('without a key: 401 before the document is looked at', async () => {
    const answer = await postParams(held.url, { documentId: manifest.ids.Queues, variables: { first: 1 } });
    expect(answer.status).toBe(401);
    expect(answer.results[0]!.errors![0]!.extensions!.code).toBe('UNAUTHENTICATED');
  });

  // QUEUES stands for the listed id of Queues.
  it.each<[string, Record<string, unknown>, number, string]>([
    ['a listed id', { documentId: 'QUEUES', variables: { first: 1 } }, 200, '{"data":{"queues":{"totalCount":0}}}'],
    ['an unknown id', { documentId: unknownId }, 400, 'PERSISTED_DOCUMENT_NOT_FOUND'],
    ['a text', { query: '{ queues(first: 1) { totalCount } }' }, 400, 'PERSISTED_DOCUMENT_REQUIRED'],
    ['a documentId that is not a string', { documentId: 5 }, 400, 'Expected \\"documentId\\" param to be a string, but given number.'],
    ['an empty documentId and no query', { documentId: '' }, 400, 'Must provide query string.'],
    ['neither', { variables: {} }, 400, 'Must provide query string.'],
    ['variables that are not an object', { documentId: 'QUEUES', variables: [1] }, 400, 'Expected \\"variables\\" param to be empty or an object, but given array.'],
    ['an unknown parameter beside a documentId', { documentId: 'QUEUES', other: 1 }, 400, 'Unexpected parameter \\"other\\" in the request body.'],
    ['an operationName that is not a string', { documentId: 'QUEUES', operationName: 5 }, 400, 'Expected \\"operationName\\" param to be a string, but given number.'],
  ])('%s: the node:http edge answers as Yoga does', async (_name, given, status, says) => {
    const body = JSON.stringify(given.documentId === 'QUEUES' ? { ...given, documentId: manifest.ids.Queues } : given);
    const answerOf = async (url: string) => {
      const res = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...bearer(key) }, body });
      return { status: res.status, allow: res.headers.get('allow'), body: await res.text() };
    };
    const direct = await answerOf(held.url);
    expect(direct).toEqual(await answerOf(heldViaYoga.url));
    expect(direct.status).toBe(status);
    expect(direct.body).toContain(says);
  });
});

describe('settings and manifests', () => {
  const schema = buildSchema();
  const policy = parseTrustedDocumentsPolicy('token');
  const write = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it('TRUSTED_DOCUMENTS: token by default; all, off, or kinds of caller; anything else stops the start', () => {
    const base = { HOST: '127.0.0.1' };
    expect([...loadConfig(base).TRUSTED_DOCUMENTS]).toEqual(['token']);
    expect([...loadConfig({ ...base, TRUSTED_DOCUMENTS: 'off' }).TRUSTED_DOCUMENTS]).toEqual([]);
    expect([...loadConfig({ ...base, TRUSTED_DOCUMENTS: 'all', TRUSTED_DOCUMENTS_MANIFESTS: manifest.path }).TRUSTED_DOCUMENTS].sort()).toEqual(['anonymous', 'key', 'token']);
    expect([...loadConfig({ ...base, TRUSTED_DOCUMENTS: 'token, anonymous', TRUSTED_DOCUMENTS_MANIFESTS: manifest.path }).TRUSTED_DOCUMENTS]).toEqual(['token', 'anonymous']);
    expect(() => loadConfig({ ...base, TRUSTED_DOCUMENTS: 'tokens' })).toThrow(/TRUSTED_DOCUMENTS: "tokens" is not a kind of caller/);
    // Keys and callers without one exist whatever else is set: held to no manifest, they could run nothing.
    expect(() => loadConfig({ ...base, TRUSTED_DOCUMENTS: 'all' })).toThrow(/TRUSTED_DOCUMENTS_MANIFESTS names no manifest/);
  });

  it('a manifest that is not an object of id -> text, or whose sha256 id is not its text\'s hash, stops the start', () => {
    const listed = JSON.parse(readFileSync(manifest.path, 'utf8')) as Record<string, string>;
    const [id, text] = Object.entries(listed)[0]!;
    const load = (path: string) => () => loadTrustedDocuments({ paths: [path], policy, schema });
    expect(load(write('not-json.json', '{'))).toThrow(/not-json\.json: /);
    expect(load(write('array.json', '[]'))).toThrow(/array\.json: expected a JSON object/);
    expect(load(write('edited.json', JSON.stringify({ [id]: `${text} ` })))).toThrow(new RegExp(`edited\\.json: "${id}" is not the SHA-256 of its document`));
    expect(load(write('no-parse.json', JSON.stringify({ 'x-app:1': 'query {' })))).toThrow(/no-parse\.json: the document of "x-app:1" does not parse/);
    expect(load(join(dir, 'missing.json'))).toThrow(/missing\.json: ENOENT/);
  });

  it('an id two manifests list with different texts stops the start; the same document twice is one', () => {
    const one = write('one.json', JSON.stringify({ 'x-app:1': '{ queues(first: 1) { totalCount } }' }));
    const other = write('other.json', JSON.stringify({ 'x-app:1': '{ queues(first: 2) { totalCount } }' }));
    expect(() => loadTrustedDocuments({ paths: [one, other], policy, schema })).toThrow(/other\.json: "x-app:1" names another document in .*one\.json/);
    const loaded = loadTrustedDocuments({ paths: [manifest.path, one, manifest.path], policy, schema });
    expect(loaded.documents.size).toBe(4);
    expect(loaded.documents.text('x-app:1')).toBe('{ queues(first: 1) { totalCount } }');
  });

  it('a listed document the schema refuses is reported, not fatal (a request naming it is answered GRAPHQL_VALIDATION_FAILED)', () => {
    const stale = write('stale.json', JSON.stringify({ 'x-app:old': '{ queues(first: 1) { gone } }' }));
    const { invalid, documents } = loadTrustedDocuments({ paths: [stale], policy, schema });
    expect(invalid).toEqual([{ manifest: stale, id: 'x-app:old', message: expect.stringContaining('"gone"') }]);
    expect(documents.text('x-app:old')).toBe('{ queues(first: 1) { gone } }');
  });
});
