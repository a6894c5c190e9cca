import { spawn, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/access/api-keys.js';
import { startSink, type Sink } from './channels/sink.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// The front-end path of docs/typed-client.md, as a front-end team would walk it: the client preset generates typed
// documents from the contract and the example's own operations, with their manifest of trusted documents; the
// compiler checks the example (and refuses the mistakes of src/misuse.ts), and the example runs against a real
// gateway with AUTH=on that loads the manifest and holds every caller to it (TRUSTED_DOCUMENTS=all), so each of its
// operations, the subscription too, is sent by id; the subscription ends by itself after the task's end status.

const ROOT = resolve(import.meta.dirname, '..');
const EXAMPLE = join(ROOT, 'examples/typed-client');
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);

/** Runs the example asynchronously: the gateway answering it lives in this process. */
async function runExample(env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const run = spawn(bin('tsx'), ['src/main.ts'], { cwd: EXAMPLE, env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  run.stdout.on('data', (d: Buffer) => (out += d.toString()));
  run.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((ok) => run.on('exit', ok));
  return { code, out, err };
}

let t: TestGateway;
let sink: Sink;
let key = '';

let generated: ReturnType<typeof spawnSync>;

beforeAll(async () => {
  // The build a front end runs first: typed documents and the manifest the gateway is then deployed with.
  generated = spawnSync(bin('graphql-codegen'), ['--config', 'codegen.ts', '--silent'], { cwd: EXAMPLE, encoding: 'utf8' });
  expect(generated.status, String(generated.stderr)).toBe(0);
  t = await startTestGateway('pglite', {
    AUTH: 'on',
    HOST: '127.0.0.1',
    TRUSTED_DOCUMENTS: 'all',
    TRUSTED_DOCUMENTS_MANIFESTS: join(EXAMPLE, 'src/gql/persisted-documents.json'),
  });
  sink = await startSink();
  ({ key } = await createApiKey(t.gateway.services.db, { name: 'front end', scopes: ['identity:read', 'queues:write', 'tasks:read', 'tasks:write'] }));
}, 60_000);
afterAll(async () => {
  await sink?.close();
  await t?.close();
});

describe('typed client for front ends (examples/typed-client)', () => {
  it('generates, type-checks (refusing the misuses) and runs its trusted documents against the gateway with a key', async () => {
    const checked = spawnSync(bin('tsc'), ['-p', 'examples/typed-client/tsconfig.json'], { cwd: ROOT, encoding: 'utf8' });
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.status).toBe(0);

    const { code, out, err } = await runExample({ GATEWAY_URL: t.url, API_KEY: key, TARGET_URL: `${sink.url}/hook` });
    expect(err).toBe('');
    expect(code).toBe(0);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toEqual({ person: 'Ivan Petrov', employers: ['Minfin', 'Romashka LLC'] });
    expect(lines[1]).toMatchObject({ paused: false });
    expect(lines[2]).toEqual({ task: 'hello', status: 'READY' });
    expect((lines[3]!.statuses as string[]).at(-1)).toBe('SUCCEEDED');
    expect(sink.requests.map((r) => r.url)).toEqual(['/hook']);
  }, 90_000);

  it('without the key the example stops with the gateway\'s refusal', async () => {
    const { code, err } = await runExample({ GATEWAY_URL: t.url, API_KEY: '' });
    expect(code).not.toBe(0);
    expect(err).toContain('An API key is required');
  }, 30_000);
});
