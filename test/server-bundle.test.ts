import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES, freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { gql, post, rpc } from './helpers/gateway.js';
import { channelSettings, startPeers, waitFor, type Peers } from './helpers/notification-peers.js';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from './helpers/otlp-receiver.js';
import { startGatewayProcess, type GatewayProcess } from './helpers/process.js';
import { makeFixtures, type Fixtures } from './signatures/fixtures.js';
import { EXTERNAL_PACKAGES } from '../scripts/bundle-server.mjs';

// The bundle `npm start` and the image run (dist/server/, scripts/bundle-server.mjs) holds the dependencies that the
// rest of the suite loads from node_modules through the source. What it could break lies off the start path: files a
// module finds next to itself (the GraphiQL client, the console, package.json, migrations), modules loaded on demand
// (the schema engine, OpenTelemetry), a worker thread's own module (CMS verification), CommonJS dependencies calling
// require() (nodemailer, smpp). Each is used here, through the bundle, on both databases.

const ROOT = resolve(import.meta.dirname, '..');
const ALLOWED_OUTSIDE = new Set([...EXTERNAL_PACKAGES, 'smpp', 'iconv-lite', 'safer-buffer']);

let fixtures: Fixtures;
let peers: Peers;
let receiver: OtlpReceiver;

beforeAll(async () => {
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
  fixtures = makeFixtures();
  [peers, receiver] = await Promise.all([startPeers(), startOtlpReceiver()]);
}, 240_000);
afterAll(async () => {
  await Promise.all([peers?.close(), receiver?.close()]);
  fixtures?.cleanup();
});

describe.each(DATABASES)('the bundle on %s', (kind) => {
  let db: FreshDatabase;
  let gateway: GatewayProcess;
  let url: string;
  let loadedFile: string;

  beforeAll(async () => {
    db = await freshDatabase(kind);
    const trust = join(fixtures.dir, `trust-${kind}`);
    mkdirSync(trust);
    writeFileSync(join(trust, 'root.pem'), readFileSync(join(fixtures.dir, 'root.pem')));
    loadedFile = join(fixtures.dir, `loaded-${kind}.txt`);
    gateway = startGatewayProcess(
      { ...db.env, LOADED_MODULES_FILE: loadedFile, GRAPHIQL: 'on', CONSOLE: 'on', TRUST_DIR_CLOUD: trust, CMS_WORKERS: '1', DELIVERY_POLL_MS: '50', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
      { bundle: true, nodeArgs: ['--import', join(ROOT, 'test/helpers/loaded-modules.mjs')] },
    );
    url = await gateway.url;
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
  });

  it('answers both doors', async () => {
    expect((await rpc(url, 'createQueue', { name: `bundle-${kind}`, rate: 5 })).body.result).toMatchObject({ name: `bundle-${kind}` });
    expect((await gql(url, 'query($n: String!) { queue(name: $n) { name } }', { n: `bundle-${kind}` })).data).toEqual({ queue: { name: `bundle-${kind}` } });
  });

  it('serves GraphiQL with its client script, the console, and the OpenAPI document with the package version', async () => {
    const page = await fetch(`${url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    const html = await page.text();
    const scripts = [...html.matchAll(/<script[^>]+src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) expect((await fetch(new URL(src, `${url}/graphql`))).status, src).toBe(200);
    expect((await fetch(`${url}/console`)).status).toBe(200);
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const openapi = (await (await fetch(`${url}/openapi.json`)).json()) as { info: { version: string } };
    expect(openapi.info.version).toBe(version);
  });

  it('verifies a CMS signature on its worker thread', async () => {
    const answer = await post(url, '/v2/verify/cms/cloud', JSON.stringify({ request: { cmsBase64: fixtures.b64('rsa-detached.p7s'), dataBase64: fixtures.b64('data.txt') } }));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.status).toBe('VERIFICATION_SUCCESS');
  });

  it('sends an email over SMTP and an SMS over SMPP', async () => {
    const settings = channelSettings(peers);
    for (const channel of ['EMAIL', 'SMS'] as const) {
      const set = await gql(url, 'mutation($c: NotificationChannel!, $cfg: JSON!) { setSystemChannel(systemId: "bundle", channel: $c, config: $cfg) { channel } }', { c: channel, cfg: settings[channel] });
      expect(set.errors).toBeUndefined();
    }
    const to = `bundle-${kind}@example.test`;
    const phone = kind === 'pglite' ? '+79001110001' : '+79001110002';
    expect((await post(url, '/v1/systems/bundle/email', JSON.stringify({ to: [to], subject: 'From the bundle', content: 'hello' }))).status).toBe(200);
    expect((await post(url, '/v1/systems/bundle/sms', JSON.stringify({ phoneNumbers: [phone], text: 'hello' }))).status).toBe(200);
    await waitFor(async () => peers.letters.some((l) => l.rcptTo.includes(to)));
    await waitFor(async () => peers.sms.some((m) => m.destination_addr === phone.slice(1)));
  });

  it('exports spans, SQL included, to the OTLP endpoint', async () => {
    await rpc(url, 'getQueue', { name: `bundle-${kind}` }, {}, { 'x-request-id': `bundle-trace-${kind}` });
    const spans = await waitFor(async () => {
      const mine = receiver.spans.filter((s) => s.attributes['gateway.request_id'] === `bundle-trace-${kind}`);
      return mine.some((s) => s.name === 'POST /getQueue') && mine.some((s) => s.kind === SPAN_KIND.CLIENT) && mine;
    });
    expect(spans.find((s) => s.name === 'POST /getQueue')!.resource).toMatchObject({ 'service.name': 'public-services-gateway' });
  });

  it('wrote no warning or error to its log, and loaded from node_modules only what the bundle leaves out', async () => {
    const bad = gateway.logLines.filter((l) => Number(l.level) >= 40 && !String(l.msg).startsWith('authentication is OFF'));
    expect(bad).toEqual([]);
    await gateway.stop();
    const packages = new Set(
      readFileSync(loadedFile, 'utf8')
        .split('\n')
        .map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1])
        .filter((p) => p !== undefined),
    );
    // The packages left outside the bundle on purpose, and smpp (with its own), which src/channels/sms.ts require()s.
    expect([...packages].filter((p) => !ALLOWED_OUTSIDE.has(p))).toEqual([]);
    expect(packages.has('@electric-sql/pglite')).toBe(kind === 'pglite');
  });
});

