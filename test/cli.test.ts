import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createConnection, createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS, npmForm } from '../src/cli/commands.js';
import { ENV_HELP, type CliCommand } from '../src/cli/command.js';
import { renderHelp } from '../src/cli/help.js';

// The command line and a first contact with the server, as an operator meets them: real processes
// (`tsx src/main.ts ...`, `npm start`), a real listener, status lines read off the socket.

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'node_modules/.bin');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A directory that does not exist yet: a command that opened the embedded database there would create it. */
function unusedDataDir(): string {
  const parent = mkdtempSync(join(tmpdir(), 'gw-cli-'));
  dirs.push(parent);
  return join(parent, 'data');
}

const memoryDb = () => `memory://${randomBytes(4).toString('hex')}`;

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(file: string, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, {
      cwd: ROOT,
      env: { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}`, LOG_LEVEL: 'warn', AUTH: 'off', HOST: '127.0.0.1', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} still running after ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}
// `node --import tsx` rather than the tsx binary: what `tsx src/main.ts` runs, in one process instead of a relay and a
// child (half the start-up of each of this file's many commands).
const TSX = ['--import', 'tsx'];
const main = (args: string[], env?: Record<string, string>, timeoutMs?: number) => run(process.execPath, [...TSX, 'src/main.ts', ...args], env, timeoutMs);

/** A loopback port held open by this test process. */
async function busyPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, server };
}

const STACK_LINE = /^\s+at /m;

describe('--help, from the command table', () => {
  let held: { port: number; server: Server };
  beforeAll(async () => {
    held = await busyPort();
  });
  afterAll(() => held.server.close());

  const cases: { name: string; command: CliCommand | null }[] = [{ name: '(main)', command: null }, ...COMMANDS.map((c) => ({ name: c.path.join(' '), command: c }))];

  it.each(cases.flatMap((c) => ['--help', '-h'].map((flag) => ({ ...c, flag }))))('$name $flag prints its help and starts nothing', async ({ command, flag }) => {
    // PORT is taken and DATA_DIR does not exist: a command that listened would fail, one that opened the database would create it.
    const dataDir = unusedDataDir();
    const outcome = await main([...(command?.path ?? []), flag], { PORT: String(held.port), DATA_DIR: dataDir }, 20_000);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toBe(renderHelp(command));
    expect(outcome.stderr).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a help names the command\'s usage, every option, argument and variable of its table entry', () => {
    for (const command of COMMANDS) {
      const help = renderHelp(command);
      expect(help).toContain(`Usage: ${npmForm(command)}`);
      for (const o of command.options ?? []) expect(help).toContain(`--${o.name} <${o.value}>`);
      for (const a of command.args ?? []) expect(help).toContain(`<${a.name}>`);
      for (const v of command.env ?? []) expect(help).toContain(`${v} `);
    }
    const all = renderHelp(null);
    for (const command of COMMANDS) expect(all).toContain(npmForm(command));
    for (const v of Object.keys(ENV_HELP)) expect(all).toContain(v);
  });

  it('every npm script that runs src/main.ts (or its build) is a command of the table, and each generates first', () => {
    const viaMain = Object.entries(PACKAGE.scripts).flatMap(([script, line]) => {
      // `exec`: the shell npm runs the script in becomes the gateway, so a signal to npm reaches it (npm-start-signals).
      const m = /^(?:exec )?(tsx src\/main\.ts|node dist\/server\/main\.js) (\S+)$/.exec(line);
      return m ? [{ script, compiled: m[1]!.startsWith('node'), command: m[2]! }] : [];
    });
    expect(viaMain.map((s) => s.command).sort()).toEqual(COMMANDS.filter((c) => c.path.length === 1).map((c) => c.path[0]).sort());
    for (const { script, compiled, command } of viaMain) {
      expect(COMMANDS.find((c) => c.path.length === 1 && c.path[0] === command)?.script).toBe(script);
      // Right after `npm ci` (postinstall) and after a pull that changed the schema (pre-script); the compiled one
      // (npm start) also compiles src/ when it changed since dist/ was built.
      expect(PACKAGE.scripts[`pre${script}`], `pre${script}`).toBe(compiled ? 'node scripts/build.mjs --if-stale' : 'node scripts/generate.mjs');
    }
    expect(PACKAGE.scripts.postinstall).toBe('node scripts/generate.mjs');
  });

});

describe('a command line the table does not accept', () => {
  it.each([
    { args: ['nope'], first: 'Unknown command "nope"; the commands are serve, migrate, migrate:diff, schema:print, import, keys.', hint: 'npx tsx src/main.ts --help' },
    { args: ['--bogus'], first: 'Unknown option "--bogus".', hint: 'npx tsx src/main.ts --help' },
    { args: ['migrate', '--bogus'], first: 'Unknown option "--bogus" for migrate.', hint: 'npm run migrate -- --help' },
    { args: ['keys'], first: '"keys" needs a command: create, list, revoke.', hint: 'npm run keys -- --help' },
    { args: ['keys', 'lsit'], first: 'Unknown command "keys lsit"; the keys commands are create, list, revoke.', hint: 'npm run keys -- --help' },
    { args: ['keys', 'create', '--name', 'x'], first: 'Missing --scopes <scope,scope>.', hint: 'npm run keys -- create --help' },
    { args: ['migrate:diff', '--name'], first: 'Option --name needs a value: --name <lower_snake_case_name>.', hint: 'npm run migrate:diff -- --help' },
    { args: ['import'], first: 'Missing <file.json>.', hint: 'npm run import -- --help' },
    { args: ['serve', 'now'], first: 'Unexpected argument "now" for serve.', hint: 'npm start -- --help' },
  ])('$args: one line, where the help is, exit 2, nothing opened', async ({ args, first, hint }) => {
    const dataDir = unusedDataDir();
    const outcome = await main(args, { DATA_DIR: dataDir }, 20_000);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr.trimEnd().split('\n')).toEqual([first, `Run \`${hint}\` for help.`]);
    expect(outcome.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('commands on a database', () => {
  it('`keys list` on an empty database says there are no keys and how to create one; stdout stays the (empty) list', async () => {
    const outcome = await main(['keys', 'list'], { DATA_DIR: memoryDb() });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toBe('There are no API keys yet. Create one with: npm run keys -- create --name <name> --scopes <scope,scope>\n');
  }, 70_000);

  it('`migrate` runs the WebAssembly schema engine without an ExperimentalWarning', async () => {
    const outcome = await main(['migrate'], { DATA_DIR: memoryDb() });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/^Applied: \d+_init, /);
    expect(outcome.stderr).toBe('');
  }, 70_000);

  it('only the WebAssembly import warning is dropped: other warnings keep Node\'s output', async () => {
    const script = [
      "import { dropWasmImportWarning } from './src/cli/wasm-warning.ts';",
      'dropWasmImportWarning();',
      "process.emitWarning('Importing WebAssembly module instances is an experimental feature and might change at any time', 'ExperimentalWarning');",
      "process.emitWarning('Some other feature is an experimental feature', 'ExperimentalWarning');",
      "process.emitWarning('a deprecation', { type: 'DeprecationWarning', code: 'DEP0999' });",
    ].join('\n');
    const outcome = await run(process.execPath, [...TSX, '--input-type=module', '--eval', script]);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stderr).not.toContain('WebAssembly');
    expect(outcome.stderr).toContain('ExperimentalWarning: Some other feature is an experimental feature');
    expect(outcome.stderr).toContain('[DEP0999] DeprecationWarning: a deprecation');
  });
});

describe('serve on a busy port', () => {
  it('prints one line naming the port and PORT, no stack, and exits non-zero', async () => {
    const held = await busyPort();
    try {
      const outcome = await main(['serve'], { PORT: String(held.port), DATA_DIR: memoryDb() });
      expect(outcome.code).not.toBe(0);
      expect(outcome.stderr).toBe(`Port ${held.port} is in use; set PORT to a free port.\n`);
      expect(outcome.stderr).not.toMatch(STACK_LINE);
    } finally {
      held.server.close();
    }
  }, 70_000);
});

/** The status line exactly as the server wrote it (fetch keeps only the code). */
function statusLine(url: string, method: string, path: string, body?: { type: string; text: string }): Promise<string> {
  const { hostname, port } = new URL(url);
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  if (body) head.push(`Content-Type: ${body.type}`, `Content-Length: ${Buffer.byteLength(body.text)}`);
  return new Promise((resolvePromise, reject) => {
    const socket = createConnection({ host: hostname, port: Number(port) }, () => socket.write(`${head.join('\r\n')}\r\n\r\n${body?.text ?? ''}`));
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n');
      if (end !== -1) {
        socket.destroy();
        resolvePromise(received.slice(0, end));
      }
    });
    socket.on('error', reject);
  });
}

describe('a running gateway, first contact', () => {
  let proc: ReturnType<typeof spawn> | undefined;
  let url = '';
  let stderr = '';
  beforeAll(async () => {
    proc = spawn(process.execPath, [...TSX, 'src/main.ts', 'serve'], {
      cwd: ROOT,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', AUTH: 'off', LOG_LEVEL: 'info', DATA_DIR: memoryDb(), SCHEDULER: 'off', TASK_DISPATCHER: 'off', DELIVERY_WORKER: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stderr!.on('data', (d) => (stderr += d));
    url = await new Promise<string>((resolveUrl, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no listening line: ${out} ${stderr}`)), 60_000);
      proc!.stdout!.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.includes('gateway listening'));
        if (line) {
          clearTimeout(timer);
          resolveUrl((JSON.parse(line) as { url: string }).url);
        }
      });
    });
  }, 70_000);
  afterAll(async () => {
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc!.once('exit', r));
    proc.kill('SIGTERM');
    await exited;
  });

  it('started without an ExperimentalWarning (or any other line) on stderr', () => {
    expect(stderr).toBe('');
  });

  it.each(['GET', 'POST', 'PUT', 'DELETE'])('an unknown path answers %s with a 404 that points to /graphql and /openapi.json', async (method) => {
    const res = await fetch(`${url}/nope`, { method, ...(method !== 'GET' && { body: '{}', headers: { 'content-type': 'application/json' } }) });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      error: {
        code: 'NOT_FOUND',
        message: `No such path: ${method} /nope. The API is at /graphql (GraphiQL in a browser), the operator console at /console, and the legacy paths are listed at /openapi.json.`,
      },
    });
  });

  it('a legacy path keeps its own 404 and 405 envelopes', async () => {
    const person = await fetch(`${url}/api/data/getPersonById?oid=999999`);
    expect(person.status).toBe(404);
    expect(((await person.json()) as { error: unknown }).error).toMatchObject({ code: 'NOT_FOUND', message: 'person "999999" not found' });
    const rpc = await fetch(`${url}/rpc`);
    expect(rpc.status).toBe(405);
    expect(await rpc.json()).toMatchObject({ jsonrpc: '2.0', error: { message: '/rpc accepts POST only' } });
  });

  const JSON_BODY = (text: string) => ({ type: 'application/json', text });
  it.each([
    { method: 'GET', path: '/healthz', status: 200 },
    { method: 'GET', path: '/readyz', status: 200 },
    { method: 'GET', path: '/metrics', status: 200 },
    { method: 'GET', path: '/openapi.json', status: 200 },
    { method: 'POST', path: '/graphql', body: JSON_BODY('{"query":"{ __typename }"}'), status: 200 },
    { method: 'POST', path: '/graphql', body: JSON_BODY('{"query":'), status: 400 },
    { method: 'GET', path: '/nope', status: 404 },
    { method: 'POST', path: '/nope', body: JSON_BODY('{}'), status: 404 },
    { method: 'GET', path: '/api/data/getPersonById?oid=999999', status: 404 },
    { method: 'GET', path: '/api/data/getPersonById', status: 400 },
    { method: 'GET', path: '/rpc', status: 405 },
    { method: 'POST', path: '/rpc', body: { type: 'text/plain', text: '{}' }, status: 415 },
    { method: 'POST', path: '/getQueue', body: JSON_BODY('{"jsonrpc":"2.0","method":"getQueue","params":{"name":"none"},"id":1}'), status: 200 },
  ])('$method $path: HTTP/1.1 $status with its reason phrase', async ({ method, path, body, status }) => {
    expect(await statusLine(url, method, path, body)).toBe(`HTTP/1.1 ${status} ${STATUS_CODES[status]}`);
  });
});
