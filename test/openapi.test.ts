import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/access/api-keys.js';
import { startGateway, type Gateway } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { importIdentity } from '../src/identity/import.js';
import { createRateBucket } from '../src/db/sql/createRateBucket.js';
import { takeRateLease } from '../src/db/sql/takeRateLease.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { identityFixture, LONE, WIDE } from './helpers/identity-fixture.js';
import { AnswerChecker, type Answer } from './helpers/openapi-answers.js';
import { eventually, sleep } from './helpers/sink.js';
import { startTaskSink, type TaskSink } from './helpers/task-sink.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';
import { makeFixtures, type Fixtures } from './signatures/fixtures.js';

// GET /openapi.json as clients generate from it: `redocly lint` (recommended rules) finds no error, and every
// documented path answers as documented. A real gateway (AUTH=on, PostgreSQL reached through a relay this test can
// cut) is called on every path with a success and with the errors each can answer; every answer's status must be
// documented for the operation and its body must match the schema exactly (no undocumented key). At the end every
// documented status must have been seen, except 500, which nothing from outside can cause.

const RATE_PER_MINUTE = 100;
const MAX_BODY_BYTES = 65_536;
const run = promisify(execFile);
/** Public paths outside the route tables. */
const SERVICE_PATHS = ['/healthz', '/readyz', '/openapi.json'];

interface Call {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

const rpcCall = (method: string, params: unknown, asResult = false): Call => ({
  method: 'POST',
  path: `/${method}`,
  body: { jsonrpc: '2.0', method, [asResult ? 'result' : 'params']: params, id: `${method}-id` },
});
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('OpenAPI document of the legacy paths', () => {
  let fixtures: Fixtures;
  let trustDir: string;
  let sink: TaskSink;
  let db: FreshDatabase & { url: string };
  let proxy: TcpProxy;
  let gateway: Gateway;
  let url: string;
  let doc: Record<string, any>;
  let checker: AnswerChecker;
  /** The last 2xx request and answer of each operation (`METHOD template`), replayed by the refusal checks. */
  const succeeded = new Map<string, { call: Call; answer: Answer }>();
  let key = '';

  const newKey = async (scopes = ['admin:all']) => (await createApiKey(gateway.services.db, { name: `openapi ${scopes.join(',')}`, scopes })).key;

  /** A header given as a list is sent once per value (fetch would join them into one). */
  async function send(call: Call, headers: Record<string, string | string[]>, body?: string): Promise<Answer> {
    const text = body ?? (call.body === undefined ? undefined : typeof call.body === 'string' ? call.body : JSON.stringify(call.body));
    const all = { ...(text !== undefined && { 'content-type': 'application/json' }), ...call.headers, ...headers };
    const res = Object.values(all).some(Array.isArray)
      ? await nodeRequest(`${url}${call.path}`, { method: call.method, headers: all, body: text })
      : await fetch(`${url}${call.path}`, { method: call.method, headers: all as Record<string, string>, ...(text !== undefined && { body: text }) });
    const answerText = await res.text();
    let parsed: unknown = answerText;
    try {
      parsed = answerText ? JSON.parse(answerText) : undefined;
    } catch {
      /* not JSON: the checker says so */
    }
    return { status: res.status, headers: res.headers, text: answerText, body: parsed };
  }

  /** Sends `call` (with the current admin key unless `headers` say otherwise), checks it against the document and its status. */
  async function expectAnswer(status: number, call: Call, headers: Record<string, string | string[]> = bearer(key), body?: string): Promise<any> {
    const answer = await send(call, headers, body);
    const pathname = new URL(call.path, url).pathname;
    checker.check(call.method, pathname, answer);
    expect(answer.status, `${call.method} ${call.path}: ${answer.text.slice(0, 300)}`).toBe(status);
    const isRpcError = typeof answer.body === 'object' && answer.body !== null && 'error' in answer.body;
    if (status < 300 && !isRpcError) succeeded.set(`${call.method} ${checker.operation(call.method, pathname).template}`, { call, answer });
    return answer.body;
  }

  /**
   * Empties a key's bucket (the SQL the gateway's limiter runs, token by token) so that its next call meets no token:
   * when a token is about to come back, it is waited for and taken too. The gateway holds no lease of this key: it is
   * only ever refused.
   */
  async function exhaust(keyId: string): Promise<void> {
    const perSecond = RATE_PER_MINUTE / 60;
    await createRateBucket(gateway.services.db, keyId, RATE_PER_MINUTE);
    for (;;) {
      const { granted, tokens } = (await takeRateLease(gateway.services.db, keyId, RATE_PER_MINUTE, perSecond, RATE_PER_MINUTE, RATE_PER_MINUTE))!;
      if (granted > 0) continue;
      const untilNext = ((1 - tokens) / perSecond) * 1000;
      if (untilNext > 200) return;
      await sleep(untilNext); // the token that is about to come back, so that the call does not get it
    }
  }

  const rpcResult = async (method: string, params: unknown, asResult = false) => (await expectAnswer(200, rpcCall(method, params, asResult))).result;
  const rpcErrorCode = async (method: string, params: unknown) => (await expectAnswer(200, rpcCall(method, params))).error.code as number;

  beforeAll(async () => {
    fixtures = makeFixtures();
    trustDir = join(fixtures.dir, 'trust');
    mkdirSync(trustDir);
    writeFileSync(join(trustDir, 'root.pem'), readFileSync(join(fixtures.dir, 'root.pem')));
    sink = await startTaskSink();
    db = await freshDatabase('postgres');
    const direct = new URL(db.url);
    proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
    const relayed = new URL(db.url);
    relayed.port = String(proxy.port);
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      AUTH: 'on',
      DATABASE_URL: relayed.toString(),
      OUTBOUND_ALLOW: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: String(RATE_PER_MINUTE),
      MAX_BODY_BYTES: String(MAX_BODY_BYTES),
      SCHEDULER: 'off',
      DELIVERY_WORKER: 'off',
      TRUST_DIR: trustDir,
      TRUST_DIR_CLOUD: trustDir,
      TRUST_DIR_TECH: trustDir,
    });
    gateway = await startGateway(config, { log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
    url = gateway.url;
    await importIdentity(gateway.services.db, identityFixture());
    const res = await fetch(`${url}/openapi.json`);
    doc = (await res.json()) as Record<string, any>;
    checker = new AnswerChecker(doc);
    checker.check('GET', '/openapi.json', { status: res.status, headers: res.headers, text: JSON.stringify(doc), body: doc });
  }, 90_000);

  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await gateway?.close();
    await proxy?.close();
    await db?.drop();
    await sink?.close();
    fixtures?.cleanup();
  });

  it('passes `redocly lint` (recommended rules) with no error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc, null, 2));
      const bin = join(import.meta.dirname, '../node_modules/.bin/redocly');
      const { stdout } = await run(bin, ['lint', file, '--format=json'], { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' } }).catch(
        (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
      );
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; severity: string; message: string }[] };
      expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
      // The one warning left: info-license (the package has none to name).
      expect(report.problems.map((p) => p.ruleId)).toEqual(['info-license']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('describes the envelope, security, servers and version clients generate from', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8')) as { version: string };
    expect(doc.info.version).toBe(pkg.version);
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(doc.components.securitySchemes).toMatchObject({ bearerAuth: { type: 'http', scheme: 'bearer' }, apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } });
    expect(doc.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    for (const path of SERVICE_PATHS) expect(doc.paths[path].get.security).toEqual([]);
    expect(doc.paths['/createQueue'].post.security).toEqual([{ bearerAuth: ['queues:write'] }, { apiKeyHeader: ['queues:write'] }]);
    const operationIds = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
    expect(new Set(operationIds).size).toBe(operationIds.length);
  });

  it('queues: each path answers its result, and errors in the JSON-RPC envelope', async () => {
    key = await newKey();
    expect(await rpcResult('createQueue', { name: 'oa-q', labels: ['oa'], description: 'OpenAPI checks' })).toMatchObject({ name: 'oa-q', status: 'OPEN' });
    expect(await rpcErrorCode('createQueue', { name: 'oa-q' })).toBe(-32009);
    await rpcResult('createQueue', { name: 'oa-del' });
    expect(await rpcResult('getQueue', { name: 'oa-q' })).toMatchObject({ labels: ['oa'] });
    expect(await rpcErrorCode('getQueue', { name: 'no-such-queue' })).toBe(-32004);
    expect(await rpcResult('listQueues', {})).toMatchObject({ totalCount: 2, pageNumber: 0, pageSize: null });
    expect(await rpcResult('listQueues', { pageSize: 1, pageNumber: 1 })).toMatchObject({ queues: [{ name: 'oa-q' }], pageSize: 1 });
    expect(await rpcErrorCode('listQueues', { pageSize: 0 })).toBe(-32602);
    await rpcResult('updateQueue', { name: 'oa-q', description: 'changed' });
    expect((await expectAnswer(200, rpcCall('searchQueue', { namePrefix: 'oa' }))).rowsCount).toBe(2);
    expect((await expectAnswer(200, rpcCall('searchQueueLabels', { label: 'oa' }))).rowsCount).toBe(1);
    await rpcResult('changeQueueRate', { name: 'oa-q', rate: 3 });
    expect(await rpcResult('pauseQueue', { name: 'oa-q' }, true)).toMatchObject({ paused: true });
    await rpcResult('resumeQueue', { name: 'oa-q' });
    expect(await rpcResult('closeQueue', { name: 'oa-del' })).toMatchObject({ status: 'CLOSE' });
    await rpcResult('openQueue', { name: 'oa-del' });
    await rpcResult('deleteQueue', { name: 'oa-del' });
    expect(await rpcErrorCode('deleteQueue', { name: 'oa-del' })).toBe(-32004);
  });

  it('tasks: READY, BLOCKED, FAILED and SUCCEEDED tasks answer as documented', async () => {
    key = await newKey();
    await rpcResult('createTask', { queueName: 'oa-q', name: 'ok', target: { url: `${sink.url}/ok` }, payload: { n: 1 } });
    await rpcResult('createTask', { queueName: 'oa-q', name: 'later', scheduleTime: new Date(Date.now() + 3_600_000).toISOString(), target: { url: `${sink.url}/ok` } });
    await rpcResult('createTask', { queueName: 'oa-q', name: 'broken', target: { url: `${sink.url}/fail`, method: 'PUT', headers: { 'x-a': 'b' } }, maxAttempts: 1 });
    expect(await rpcErrorCode('createTask', { queueName: 'no-such-queue', name: 'x', target: { url: `${sink.url}/ok` } })).toBe(-32004);
    await eventually(async () => (await rpcResult('getTask', { queueName: 'oa-q', name: 'broken' })).status === 'FAILED');
    await eventually(async () => (await rpcResult('getTask', { queueName: 'oa-q', name: 'ok' })).status === 'SUCCEEDED');
    expect(await rpcErrorCode('getTask', { queueName: 'oa-q', name: 'none' })).toBe(-32004);
    expect(await rpcResult('listTasks', { queueName: 'oa-q' })).toMatchObject({ totalCount: 3 });
    await rpcResult('listTasks', { pageSize: 2 });
    expect((await expectAnswer(200, rpcCall('searchTasks', { queueName: 'oa-q', status: 'FAILED' }))).rowsCount).toBe(1);
    expect(await rpcResult('getTasksSummary', { queueName: 'oa-q' })).toMatchObject({ total: 3, FAILED: 1, BLOCKED: 1, SUCCEEDED: 1 });
    expect(await rpcResult('cancelTask', { queueName: 'oa-q', name: 'later' })).toMatchObject({ status: 'CANCELLED' });
    expect(await rpcErrorCode('cancelTask', { queueName: 'oa-q', name: 'later' })).toBe(-32009);
    expect(await rpcResult('restartTask', { queueName: 'oa-q', name: 'broken' })).toMatchObject({ status: 'READY', attempts: 0 });
    expect(await rpcErrorCode('restartTask', { queueName: 'oa-q', name: 'ok' })).toBe(-32009);
  });

  it('scheduler: jobs with HTTP and task targets, instances, pause under result', async () => {
    key = await newKey();
    await rpcResult('create', { name: 'oa.http', schedule: '0 2 * * *', timeZone: 'Europe/Berlin', target: { http: { url: `${sink.url}/ok`, headers: { a: 'b' } } }, retryConfig: { retryCount: 1 } });
    await rpcResult('create', { name: 'oa.task', schedule: '@daily', target: { task: { queue: 'oa-q', template: { target: { url: `${sink.url}/ok` } } } } });
    expect(await rpcErrorCode('create', { name: 'oa.http', schedule: '@daily', target: { http: { url: `${sink.url}/ok` } } })).toBe(-32009);
    expect(await rpcResult('get', { name: 'oa.http' })).toMatchObject({ target: { kind: 'HTTP' } });
    expect(await rpcErrorCode('get', { name: 'no.such' })).toBe(-32004);
    expect(await rpcResult('list', {})).toHaveLength(2);
    await rpcResult('update', { name: 'oa.task', description: 'nightly copy' });
    expect(await rpcResult('pause', { name: 'oa.http' }, true)).toMatchObject({ status: 'PAUSED' });
    await rpcResult('resume', { name: 'oa.http' });
    expect(await rpcResult('run', { name: 'oa.http' })).toMatchObject({ jobName: 'oa.http', trigger: 'MANUAL' });
    expect((await expectAnswer(200, rpcCall('search', { namePrefix: 'oa.' }))).rowsCount).toBe(2);
    await eventually(async () => (await expectAnswer(200, rpcCall('searchJobInstance', { jobName: 'oa.http' }))).result[0]?.finishTime);
    await rpcResult('delete', { name: 'oa.task' });
    expect(await rpcErrorCode('delete', { name: 'oa.task' })).toBe(-32004);
  });

  it('every JSON-RPC path refuses params that are not an object with -32602', async () => {
    key = await newKey();
    for (const path of Object.keys(doc.paths).filter((p) => doc.paths[p].post?.requestBody?.content['application/json'].schema.properties?.jsonrpc)) {
      expect(await rpcErrorCode(path.slice(1), 'not an object'), path).toBe(-32602);
    }
  });

  it('identity: records with fields left out, 304, 400, 403 for a scope, 404', async () => {
    key = await newKey();
    const get = (path: string, headers: Record<string, string> = {}): Call => ({ method: 'GET', path, headers });
    const person = await expectAnswer(200, get(`/api/data/getPersonById?oid=${WIDE}`));
    await expectAnswer(304, get(`/api/data/getPersonById?oid=${WIDE}`, { 'if-none-match': `"${person.eTag}"` }));
    expect(await expectAnswer(200, get(`/api/data/getPersonById?oid=${LONE}`, { 'x-idpscopes': 'fullname' }))).not.toHaveProperty('snils');
    await expectAnswer(404, get('/api/data/getPersonById?oid=999'));
    await expectAnswer(400, get('/api/data/getPersonById?oid=abc'));
    expect((await expectAnswer(200, get(`/api/data/getPersonOrganizationsById?oid=${WIDE}`))).size).toBe(50);
    await expectAnswer(403, get(`/api/data/getPersonOrganizationsById?oid=${WIDE}`, { 'x-idpscopes': 'fullname' }));
    await expectAnswer(400, get(`/api/data/getPersonOrganizationsById?oid=${WIDE}`, { 'x-idpscopes': 'no_such_scope' }));
    await expectAnswer(200, get(`/api/data/orgs/getPersonGroupsOrganizationsById?oid=${WIDE}`));
    await expectAnswer(400, get('/api/data/orgs/getPersonGroupsOrganizationsById'));
    await expectAnswer(404, get('/api/data/orgs/getPersonGroupsOrganizationsById?oid=999'));
    await expectAnswer(200, get(`/api/data/orgs/getPersonEmplOrganizationsById?oid=${WIDE}&pageSize=3&pageIndex=2`));
    await expectAnswer(200, get(`/api/data/orgs/getPersonEmplOrganizationsById?oid=${LONE}`));
    await expectAnswer(400, get(`/api/data/orgs/getPersonEmplOrganizationsById?oid=${WIDE}&pageSize=0`));
    await expectAnswer(404, get('/api/data/getPersonOrganizationsById?oid=999'));
    await expectAnswer(404, get('/api/data/orgs/getPersonEmplOrganizationsById?oid=999'));
  });

  it('signatures: v2 and v1 answers, with and without signed data or a chain; refusals in each envelope', async () => {
    key = await newKey();
    const post = (path: string, body: unknown): Call => ({ method: 'POST', path, body });
    const data = fixtures.b64('data.txt');
    expect(await expectAnswer(200, post('/v2/verify/cms/cloud', { request: { cmsBase64: fixtures.b64('rsa-detached.p7s'), dataBase64: data } }))).toMatchObject({ status: 'VERIFICATION_SUCCESS' });
    expect(await expectAnswer(200, post('/v2/verify/cms/tech', { request: { cmsBase64: fixtures.b64('rsa-attached.p7s'), needSignedData: true }, auditParameters: { userId: 'u-1' } }))).toMatchObject({
      result: { signedData: expect.any(String) },
    });
    await expectAnswer(200, post('/v2/verify/cms/tech', { request: { cmsBase64: fixtures.b64('untrusted.p7s') } }));
    expect(await expectAnswer(200, post('/v1/checkSign/cms', { cmsBase64: fixtures.b64('rsa-attached.p7s'), needSignedData: true }))).toMatchObject({ valid: true });
    expect(await expectAnswer(200, post('/v1/checkSign/cms', { cmsBase64: fixtures.b64('untrusted.p7s') }))).toMatchObject({ valid: false });
    expect(await expectAnswer(400, post('/v2/verify/cms/cloud', { request: { cmsBase64: '' } }))).toMatchObject({ status: 'INPUT_DATA_ERROR' });
    expect(await expectAnswer(400, post('/v2/verify/cms/tech', { request: {}, auditParameters: { userId: 'x'.repeat(300) } }))).toMatchObject({ status: 'AUDIT_PARAMETERS_ERROR' });
    expect(await expectAnswer(400, post('/v1/checkSign/cms', { cmsBase64: fixtures.b64('rsa-attached.p7s'), unknownField: 1 }))).toMatchObject({ status: { code: 'REQUEST_VALIDATION_ERROR' } });
  });

  const SENDS: Record<string, unknown> = {
    webhook: { url: 'http://127.0.0.1:9/hook', method: 'PUT', body: { n: 1 } },
    'webhook-chatA': { content: 'Your passport is ready', chatId: '@cityhall' },
    'webhook-chatB': { content: 'Deploy done', channel: 'town-square' },
    sms: { phoneNumbers: ['+79001234567'], text: 'Code 1234', flag: 'URGENT' },
    push: { title: 'Queue', body: 'Your turn', deviceTokens: ['tok-1'] },
    general: { type: 'oa_notice', title: 'Hello', content: 'Body', extraNotificationData: { room: 12 } },
    gaps: { from: 'registry', sendTime: '2026-01-31T12:00:00+03:00', gapsRequest: { documents: [{ id: 'd1' }] }, useSystemSettings: true },
  };
  const sent: Record<string, { incomingId: string; ids: string[] }> = {};

  it('notifications: every sending path, the upload (201), bad bodies (400) and a reused Idempotency-Key (409)', async () => {
    key = await newKey();
    const upload = await expectAnswer(201, { method: 'POST', path: '/v1/systems/oa-sys/files', body: { files: [{ filename: 'a.pdf', contentType: 'application/pdf', data: 'JVBERi0xLjQ=' }] } });
    await expectAnswer(400, { method: 'POST', path: '/v1/systems/oa-sys/files', body: { files: [] } });
    const bodies = { ...SENDS, email: { to: ['anna@example.org'], subject: 'Certificate', content: 'Ready', fileGroupId: upload.fileGroupId } };
    for (const [segment, body] of Object.entries(bodies)) {
      const path = `/v1/systems/oa-sys/${segment}`;
      const accepted = await expectAnswer(200, { method: 'POST', path, body, headers: { 'idempotency-key': `oa-${segment}` } });
      sent[segment] = { incomingId: accepted.incomingId, ids: accepted.notificationResponses.map((r: { id: string }) => r.id) };
      await expectAnswer(409, { method: 'POST', path, body: { ...(body as object), sendBefore: '2099-01-01T00:00:00Z' }, headers: { 'idempotency-key': `oa-${segment}` } });
      await expectAnswer(400, { method: 'POST', path, body: { bogus: true } });
    }
  });

  it('stubs: pages, attachments and status changes; 400, 404 and 409 as ResponseError', async () => {
    key = await newKey();
    const general = sent.general!;
    const get = (path: string): Call => ({ method: 'GET', path });
    const put = (path: string): Call => ({ method: 'PUT', path });
    expect(await expectAnswer(200, get('/v1/type/oa_notice?sortBy=createTime&order=ASC'))).toMatchObject({ totalElements: 1, content: [{ channel: 'general' }] });
    await expectAnswer(200, get(`/v1/type/oa_notice/ids/${general.ids[0]}`));
    await expectAnswer(200, get(`/v1/systems/oa-sys/type/oa_notice/incomingId/${general.incomingId}`));
    await expectAnswer(200, get('/v1/systems/oa-sys/type/sms/externalIds/ext-1,ext-2'));
    const email = sent.email!;
    expect(await expectAnswer(200, get(`/v1/type/email/id/${email.ids[0]}/attachments`))).toMatchObject([{ filename: 'a.pdf' }]);
    await expectAnswer(404, get('/v1/type/email/id/00000000-0000-4000-8000-000000000000/attachments'));
    await expectAnswer(400, get('/v1/type/email/id/not-a-uuid/attachments'));
    await expectAnswer(400, get('/v1/type/oa_notice?pageSize=0'));
    await expectAnswer(400, get('/v1/type/oa_notice/ids/not-a-uuid'));
    await expectAnswer(400, get(`/v1/systems/oa-sys/type/oa_notice/incomingId/nope`));
    await expectAnswer(400, get('/v1/systems/oa-sys/type/sms/externalIds/a?order=UP'));
    expect(await expectAnswer(200, put(`/v1/type/oa_notice/ids/${general.ids[0]}?status=CANCELLED`))).toMatchObject({ content: [{ status: 'CANCELLED' }] });
    await expectAnswer(409, put(`/v1/type/oa_notice/ids/${general.ids[0]}?status=READ`));
    await expectAnswer(404, put('/v1/type/oa_notice/ids/00000000-0000-4000-8000-000000000000?status=CANCELLED'));
    await expectAnswer(400, put(`/v1/type/oa_notice/ids/${general.ids[0]}?status=LOST`));
  });

  it('every operation refuses alike: 401 without a key, 403 without the scope or from a foreign origin, 429 over the rate, 400 for a repeated X-IdpScopes, 413 and 415 on bodies', async () => {
    const operations = checker.documented().map((d) => d.split(' ').slice(0, 2).join(' '));
    const legacy = [...new Set(operations)].filter((o) => !SERVICE_PATHS.some((path) => o === `GET ${path}`));
    expect(legacy.filter((o) => !succeeded.has(o)), 'operations never answered a success').toEqual([]);
    key = await newKey();
    const unscoped = await newKey(['metrics:read']);
    const limited = await createApiKey(gateway.services.db, { name: 'openapi limited', scopes: ['admin:all'] });
    const foreign = { ...bearer(key), origin: 'http://elsewhere.example' };
    for (const operation of legacy) {
      const { call } = succeeded.get(operation)!;
      await expectAnswer(401, call, {});
      await expectAnswer(403, call, bearer(unscoped));
      await expectAnswer(403, call, foreign);
      await exhaust(limited.apiKey.id);
      await expectAnswer(429, call, bearer(limited.key));
      await expectAnswer(400, call, { ...bearer(key), 'x-idpscopes': ['fullname', 'snils'] });
      if (call.method === 'POST') {
        await expectAnswer(415, call, { ...bearer(key), 'content-type': 'text/plain' });
        await expectAnswer(413, call, bearer(key), `${JSON.stringify(call.body)}${' '.repeat(MAX_BODY_BYTES)}`);
      }
    }
    for (const path of SERVICE_PATHS) {
      await expectAnswer(200, { method: 'GET', path }, {});
      await expectAnswer(403, { method: 'GET', path }, { origin: 'http://elsewhere.example' });
    }
  }, 60_000);

  it('a database outage answers 503 with Retry-After on every operation, in its envelope', async () => {
    const operations = [...succeeded.keys()].filter((o) => !SERVICE_PATHS.some((path) => o === `GET ${path}`));
    await proxy.cut();
    try {
      for (const operation of operations) await expectAnswer(503, succeeded.get(operation)!.call);
      await expectAnswer(503, { method: 'GET', path: '/readyz' }, {});
    } finally {
      await proxy.restore();
    }
    await eventually(async () => (await fetch(`${url}/readyz`)).status === 200, 20_000, 200);
  }, 60_000);

  it('every documented status was answered (500 aside: nothing from outside causes one)', () => {
    const missing = checker.documented().filter((d) => !checker.covered.has(d) && !d.endsWith(' 500'));
    expect(missing).toEqual([]);
  });

  it('a schema that says the wrong thing fails the check: one nullability, one key', () => {
    const created = succeeded.get('POST /createTask')!.answer;
    expect((created.body as { result: { result: unknown } }).result.result).toBeNull();
    const queue = succeeded.get('POST /getQueue')!.answer;
    const real = new AnswerChecker(doc);
    expect(() => real.check('POST', '/createTask', created)).not.toThrow();
    expect(() => real.check('POST', '/getQueue', queue)).not.toThrow();
    // A task's `result` (null until the target answers) declared never null:
    const wrongNullability = structuredClone(doc);
    const result = wrongNullability.components.schemas.LegacyTask.properties.result;
    result.type = result.type.filter((t: string) => t !== 'null');
    expect(() => new AnswerChecker(wrongNullability).check('POST', '/createTask', created)).toThrow(/result must be object/);
    // A queue key the schema no longer names:
    const missingKey = structuredClone(doc);
    const legacyQueue = missingKey.components.schemas.LegacyQueue;
    delete legacyQueue.properties.labels;
    legacyQueue.required = legacyQueue.required.filter((k: string) => k !== 'labels');
    expect(() => new AnswerChecker(missingKey).check('POST', '/getQueue', queue)).toThrow(/must NOT have additional properties/);
  });
});

/** A request through node:http, whose headers may repeat, answered as fetch's Response is read here. */
function nodeRequest(target: string, options: { method: string; headers: Record<string, string | string[]>; body?: string | undefined }): Promise<{ status: number; headers: Headers; text(): Promise<string> }> {
  return import('node:http').then(
    (http) =>
      new Promise((resolve, reject) => {
        const req = http.request(target, { method: options.method, headers: options.headers }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(res.headers)) for (const v of [value ?? []].flat()) headers.append(name, v);
            resolve({ status: res.statusCode ?? 0, headers, text: async () => text });
          });
        });
        req.on('error', reject);
        req.end(options.body);
      }),
  );
}
