import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { parse as parseYaml } from 'yaml';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { freePort, until } from './helpers/ports.js';

// No Docker engine runs here and no image can be pulled, so the Dockerfile is replayed as written instead: its stages
// become directories, its COPY lines copy from the build context (the working tree less .dockerignore), its RUN lines
// run through sh in the stage's WORKDIR with the stage's ENV. Then, as compose.yaml would: its one-shot migrate
// service, and each gateway instance's CMD as the image's unprivileged user with the environment compose gives it
// (the database: a fresh one on the test server), each until the image's HEALTHCHECK passes; then HAProxy (a Debian
// package, scripts/ci-apt-packages.txt) with deploy/haproxy.cfg in front of both. What stands in for the base image:
// this project's Node 24 (the `node` devDependency) and the machine's npm, on a PATH of their own. compose.yaml is
// also checked as data. The replay takes about 2.5 minutes, most of it the two `npm ci` and tsc.

const ROOT = resolve(import.meta.dirname, '..');
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const COMPOSE = parseYaml(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as Compose;

interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  /** The rest of the line after the flags. */
  rest: string;
}

interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

interface Service {
  image?: string;
  build?: string | { context: string };
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  ports?: string[];
  volumes?: string[];
  restart?: string;
}

interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** Instructions by stage; continuation lines joined, comments dropped, leading `--flag=value`s split off. */
function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword = '', tail = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const flags: Record<string, string> = {};
    let rest = tail;
    for (let m = /^--([\w-]+)=(\S+)\s*/.exec(rest); m; m = /^--([\w-]+)=(\S+)\s*/.exec(rest)) {
      flags[m[1]!] = m[2]!;
      rest = rest.slice(m[0].length);
    }
    const instruction = { keyword: keyword.toUpperCase(), flags, rest };
    if (instruction.keyword === 'FROM') {
      const [, from = '', name = String(stages.length)] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest) ?? [];
      stages.push({ name, from, instructions: [] });
    } else {
      expect(stages.length, `${line}: an instruction before FROM`).toBeGreaterThan(0);
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

/** `ENV A=b C="d e"` (the legacy `ENV A b` too). */
function parseEnv(rest: string): Record<string, string> {
  if (!rest.includes('=')) {
    const [key = '', ...value] = rest.split(/\s+/);
    return { [key]: value.join(' ') };
  }
  return Object.fromEntries([...rest.matchAll(/([\w.-]+)=("(?:[^"\\]|\\.)*"|\S*)/g)].map((m) => [m[1]!, m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!]));
}

/** An exec-form (JSON array) argument list, or a shell form run by `sh -c`. */
const commandOf = (rest: string): string[] => (rest.startsWith('[') ? (JSON.parse(rest) as string[]) : ['/bin/sh', '-c', rest]);

/** Compose's `${NAME}` and `${NAME:-default}` with nothing set: what `docker compose up` with no .env uses. */
const interpolate = (value: string): string => value.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, _name: string, fallback?: string) => fallback ?? '');

/** .dockerignore as path matchers (a pattern excludes the path and everything under it; `!` re-includes). */
function dockerignore(): (path: string) => boolean {
  const rules = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const negate = l.startsWith('!');
      const pattern = posix.normalize(l.replace(/^!/, '').replace(/^\/+/, '')).replace(/\/$/, '');
      const source = pattern
        .split(/(\*\*\/?|\*|\?)/)
        .map((part) => (part.startsWith('**') ? '(?:.*/)?' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('');
      return { negate, regex: new RegExp(`^${source}(?:/.*)?$`) };
    });
  return (path) => rules.reduce((excluded, rule) => (rule.regex.test(path) ? !rule.negate : excluded), false);
}

/** The build context as Docker sends it: every file of the working tree that .dockerignore does not exclude. */
function contextFiles(): string[] {
  const excluded = dockerignore();
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (excluded(path)) return [];
      return entry.isDirectory() ? walk(path) : entry.isFile() ? [path] : [];
    });
  return walk('');
}

/** What a fresh clone plus uncommitted work holds: tracked files and untracked ones git does not ignore. */
function gitFiles(): Set<string> {
  const out = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' });
  expect(out.status, out.stderr).toBe(0);
  return new Set(out.stdout.split('\0').filter(Boolean));
}

/** Runs `nudge` every 300 ms until `settled` settles (or `ms` pass); returns what it settled to. */
async function untilSettled<T>(settled: Promise<T>, nudge: () => Promise<unknown>, ms: number): Promise<T> {
  let done = false;
  const result = settled.finally(() => (done = true));
  const deadline = Date.now() + ms;
  while (!done) {
    if (Date.now() > deadline) throw new Error(`nothing came within ${ms} ms`);
    await nudge();
    await Promise.race([result.catch(() => undefined), new Promise((ok) => setTimeout(ok, 300))]);
  }
  return result;
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(argv: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Outcome> {
  return new Promise((ok, fail) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`${argv.join(' ')}: no exit within ${options.timeoutMs} ms\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`));
    }, options.timeoutMs);
    child.on('error', fail);
    child.on('exit', (code) => {
      clearTimeout(timer);
      ok({ code, stdout, stderr });
    });
  });
}

const stages = parseDockerfile(DOCKERFILE);
const runtime = stages.at(-1)!;
const last = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).at(-1);
const gatewayServices = Object.entries(COMPOSE.services).filter(([, s]) => s.healthcheck?.disable !== true && s.command === undefined && s.build !== undefined);

describe('Dockerfile', () => {
  it('builds in one stage and runs production dependencies and dist/ in another, as a user that is not root', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    for (const stage of stages) expect(stage.from).toMatch(/^node:24-[\w.-]*slim$/);
    const runs = (stage: Stage) => stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.rest);
    expect(runs(stages[0]!)).toEqual(['npm ci', 'npm run build']);
    expect(runs(runtime)).toEqual(['npm ci --omit=dev --ignore-scripts']);
    expect(runtime.instructions.some((i) => i.keyword === 'COPY' && i.flags.from === 'build' && /\/dist\/?\s/.test(i.rest))).toBe(true);
    expect(last(runtime, 'USER')?.rest).toMatch(/^(?!root$|0$)\S+$/);
    expect(parseEnv(runtime.instructions.filter((i) => i.keyword === 'ENV').map((i) => i.rest).join(' '))).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0' });
    expect(last(runtime, 'CMD')?.rest).toBe('["node", "dist/server/main.js", "serve"]');
    expect(last(runtime, 'HEALTHCHECK')?.rest).toMatch(/^CMD \[.*\/readyz/);
  });

  it('takes from the build context only what a clone has (no git-ignored file: generated code, dist/, node_modules/)', () => {
    const tracked = gitFiles();
    const context = contextFiles();
    const sources = stages.flatMap((s) => s.instructions.filter((i) => i.keyword === 'COPY' && !i.flags.from).flatMap((i) => i.rest.split(/\s+/).slice(0, -1)));
    const taken = context.filter((f) => sources.some((source) => f === posix.normalize(source) || f.startsWith(posix.normalize(source).replace(/\/?$/, '/'))));
    expect(taken.length).toBeGreaterThan(50);
    expect(taken.filter((f) => !tracked.has(f))).toEqual([]);
  });
});

describe('compose.yaml', () => {
  const services = COMPOSE.services;

  it('has PostgreSQL with a volume and pg_isready, a one-shot migrate service, two gateway instances and a proxy', () => {
    expect(Object.keys(services).sort()).toEqual(['gateway-1', 'gateway-2', 'migrate', 'postgres', 'proxy']);
    expect(services.postgres!.image).toMatch(/^postgres:1[67]\b/);
    const [volume] = services.postgres!.volumes ?? [];
    expect(volume).toMatch(/^(\w+):\/var\/lib\/postgresql\/data$/);
    expect(Object.keys(COMPOSE.volumes ?? {})).toContain(volume!.split(':')[0]);
    expect(services.postgres!.healthcheck?.test?.join(' ')).toMatch(/pg_isready/);
    expect(services.migrate!.command).toEqual(['node', 'dist/server/main.js', 'migrate']);
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    // A one-shot command never answers /readyz: the image's HEALTHCHECK must not judge it.
    expect(services.migrate!.healthcheck).toEqual({ disable: true });
    expect(services.migrate!.restart).toBe('no');
    expect(gatewayServices.map(([name]) => name)).toEqual(['gateway-1', 'gateway-2']);
  });

  it('runs each gateway from this Dockerfile on PostgreSQL with AUTH on, after the migration, health-checked as the image says', () => {
    const dockerHealth = last(runtime, 'HEALTHCHECK')!.rest.replace(/^CMD\s+/, '');
    const port = Number(last(runtime, 'EXPOSE')!.rest);
    for (const [name, gateway] of [...gatewayServices, ['migrate', services.migrate!] as const]) {
      expect(gateway.build, name).toBe('.');
      expect(gateway.image, name).toBe(services['gateway-1']!.image);
      const url = new URL(interpolate(gateway.environment!.DATABASE_URL!));
      expect(url.protocol, name).toBe('postgresql:');
      expect(url.hostname, `${name}: DATABASE_URL names the postgres service`).toBe('postgres');
    }
    for (const [name, gateway] of gatewayServices) {
      const env = gateway.environment!;
      expect(env.HOST, name).toBe('0.0.0.0');
      expect(Number(env.PORT), name).toBe(port);
      expect(env.AUTH, name).toBe('on');
      expect(env.MIGRATE_ON_START, `${name}: the migrate service migrates`).toBe('off');
      expect(gateway.depends_on, name).toEqual({ postgres: { condition: 'service_healthy' }, migrate: { condition: 'service_completed_successfully' } });
      expect(gateway.healthcheck?.test, name).toEqual(['CMD', ...(JSON.parse(dockerHealth) as string[])]);
      expect(gateway.ports, `${name} is reached through the proxy only`).toBeUndefined();
    }
  });

  it('publishes one port, the proxy, which health-checks and round-robins both instances and passes WebSocket upgrades', () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => ({ name, p })));
    expect(published).toHaveLength(1);
    expect(published[0]!.name).toBe('proxy');
    const proxy = services.proxy!;
    expect(proxy.image).toMatch(/^haproxy:\d/);
    expect(proxy.depends_on).toEqual({ 'gateway-1': { condition: 'service_healthy' }, 'gateway-2': { condition: 'service_healthy' } });
    expect(proxy.healthcheck?.test?.join(' ')).toMatch(/\/healthz/);
    const [file, target] = proxy.volumes![0]!.split(':');
    expect(target).toBe('/usr/local/etc/haproxy/haproxy.cfg');
    const listen = Number(interpolate(published[0]!.p).split(':').at(-1));
    const config = readFileSync(join(ROOT, file!), 'utf8').replace(/#.*$/gm, '');
    expect(config).toMatch(new RegExp(`^\\s*bind :${listen}$`, 'm'));
    expect(config).toMatch(/^\s*mode http$/m);
    expect(config).toMatch(/^\s*balance roundrobin$/m);
    expect(config).toMatch(/^\s*option httpchk GET \/readyz$/m);
    // Upgraded connections (graphql-ws) live by `timeout tunnel`, not by the 60 s ones.
    expect(config).toMatch(/^\s*timeout tunnel (\d+h|\d{4,}s)$/m);
    // Nothing that would hold a streamed response back.
    expect(config).not.toMatch(/^\s*(compression|filter compression|option http-buffer-request)/m);
    const port = last(runtime, 'EXPOSE')!.rest;
    const servers = [...config.matchAll(/^\s*server (\S+) (\S+)/gm)].map((m) => m[2]);
    expect(servers).toEqual(gatewayServices.map(([name]) => `${name}:${port}`));
    expect(config).toMatch(/^\s*default-server .*\bcheck\b/m);
  });
});

describe('the image, replayed without Docker', () => {
  const work = mkdtempSync(join(tmpdir(), 'gw-image-'));
  let database: FreshDatabase & { url: string };
  const timings: string[] = [];

  /** The stage's filesystem: `/app` of stage `build` is <work>/build/app. */
  const inStage = (stage: string, path: string) => join(work, stage, path);
  /** The unprivileged user the runtime stage's USER names, or nobody where this machine has no such user. */
  const user = (() => {
    const name = last(runtime, 'USER')!.rest;
    const id = (flag: string, who: string) => spawnSync('id', [flag, who], { encoding: 'utf8' });
    const who = id('-u', name).status === 0 ? name : 'nobody';
    return { name: who, uid: Number(id('-u', who).stdout), gid: Number(id('-g', who).stdout) };
  })();
  /** Runs argv as that user when this test runs as root (setpriv execs it: the pid is the command's own). */
  const asUser = (argv: string[]) => (process.getuid?.() === 0 ? ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', ...argv] : argv);

  const bin = join(work, 'bin');
  /** The base image's PATH, with this project's Node 24 and the machine's npm where the image has its own. */
  const imagePath = `${bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
  const replayed: { stage: string; workdir: string; env: Record<string, string> }[] = [];
  const instances: { name: string; port: number; child: ChildProcess; output: string; exited: Promise<number | null> }[] = [];
  let proxy: ChildProcess | undefined;
  let key = '';
  /** A POST /graphql with the key (when there is one yet). */
  const query = (base: string, text: string) =>
    fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) }, body: JSON.stringify({ query: text }) });
  /** The container's environment: the image's ENV, then compose's (postgres:5432 is the test server's fresh database). */
  const containerEnv = (service: Service, port?: number): Record<string, string> => ({
    PATH: imagePath,
    ...replayed.at(-1)!.env,
    ...Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))])),
    DATABASE_URL: database.url,
    ...(port !== undefined && { PORT: String(port) }),
  });
  /** How this machine reaches the registry (its CA, proxies): a real build gets the same from its daemon's network. */
  const registryAccess = Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => v !== undefined && /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|no_proxy)$/i.test(k)),
  ) as Record<string, string>;

  beforeAll(async () => {
    chmodSync(work, 0o755);
    mkdirSync(bin);
    symlinkSync(realpathSync(join(ROOT, 'node_modules/.bin/node')), join(bin, 'node'));
    for (const tool of ['npm', 'npx']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8', env: { PATH: '/usr/local/bin:/usr/bin:/bin' } }).stdout.trim();
      expect(found, `${tool} on this machine`).not.toBe('');
      symlinkSync(found, join(bin, tool));
    }
    database = await freshDatabase('postgres');
  }, 60_000);

  afterAll(async () => {
    for (const child of [proxy, ...instances.map((i) => i.child)]) {
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((ok) => child.once('exit', ok));
      child.kill('SIGKILL');
      await exited;
    }
    await database?.drop();
    // Two stages' node_modules: tens of thousands of files, slow to remove on a busy machine.
    rmSync(work, { recursive: true, force: true });
  }, 180_000);

  it('builds: every stage, COPY and RUN as written, in a directory per stage', { timeout: 600_000 }, async () => {
    const context = contextFiles();
    for (const stage of stages) {
      let workdir = '/';
      const env: Record<string, string> = {};
      mkdirSync(inStage(stage.name, '/'), { recursive: true });
      for (const instruction of stage.instructions) {
        const started = performance.now();
        const { keyword, flags, rest } = instruction;
        if (keyword === 'WORKDIR') {
          workdir = posix.resolve(workdir, rest);
          mkdirSync(inStage(stage.name, workdir), { recursive: true });
        } else if (keyword === 'ENV') {
          Object.assign(env, parseEnv(rest));
        } else if (keyword === 'COPY') {
          const words = rest.split(/\s+/);
          const dest = posix.resolve(workdir, words.at(-1)!);
          const intoDir = words.length > 2 || words.at(-1)!.endsWith('/');
          for (const source of words.slice(0, -1)) {
            if (flags.from) {
              const from = inStage(flags.from, posix.resolve('/app', source));
              expect(existsSync(from), `${keyword} --from=${flags.from} ${source}`).toBe(true);
              cpSync(from, statSync(from).isDirectory() || !intoDir ? inStage(stage.name, dest) : join(inStage(stage.name, dest), basename(from)), { recursive: true });
              continue;
            }
            const path = posix.normalize(source).replace(/\/$/, '');
            const files = context.filter((f) => f === path || f.startsWith(`${path}/`));
            expect(files.length, `COPY ${source}: in the build context`).toBeGreaterThan(0);
            const isDir = files.length > 1 || files[0] !== path;
            for (const file of files) {
              const target = isDir ? join(inStage(stage.name, dest), relative(path, file)) : intoDir ? join(inStage(stage.name, dest), basename(file)) : inStage(stage.name, dest);
              mkdirSync(dirname(target), { recursive: true });
              cpSync(join(ROOT, file), target);
            }
          }
        } else if (keyword === 'RUN') {
          // `--mount=type=cache` keeps npm's cache out of the layer; here npm uses this machine's cache, preferring it
          // to the registry (the same packages, by the lockfile's integrity hashes).
          const outcome = await run(commandOf(rest), {
            cwd: inStage(stage.name, workdir),
            env: { PATH: imagePath, HOME: '/root', ...registryAccess, ...env, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
            timeoutMs: 480_000,
          });
          expect(outcome.code, `RUN ${rest} (stage ${stage.name})\n${outcome.stdout.slice(-3000)}\n${outcome.stderr.slice(-3000)}`).toBe(0);
          timings.push(`${stage.name}: RUN ${rest} ${((performance.now() - started) / 1000).toFixed(1)} s`);
        }
      }
      replayed.push({ stage: stage.name, workdir, env });
    }
    const app = inStage(runtime.name, replayed.at(-1)!.workdir);
    expect(existsSync(join(app, 'dist/server/main.js'))).toBe(true);
    for (const dev of ['tsx', 'vitest', '@graphql-codegen/cli']) expect(existsSync(join(app, 'node_modules', dev)), `${dev} stays in the build stage`).toBe(false);
    expect(existsSync(join(app, 'src')), 'no sources in the runtime stage').toBe(false);
  });

  it('runs: compose’s migrate, then each instance’s CMD as the image’s user until its HEALTHCHECK passes', { timeout: 120_000 }, async () => {
    const image = replayed.at(-1);
    expect(image, 'the build above succeeded').toBeDefined();
    const cwd = inStage(runtime.name, image!.workdir);

    let started = performance.now();
    const migrate = await run(asUser(COMPOSE.services.migrate!.command!), { cwd, env: containerEnv(COMPOSE.services.migrate!), timeoutMs: 60_000 });
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toMatch(/^Applied: \d{14}_/);
    timings.push(`migrate ${Math.round(performance.now() - started)} ms`);

    const health = commandOf(last(runtime, 'HEALTHCHECK')!.rest.replace(/^CMD\s+/, ''));
    for (const [name, service] of gatewayServices) {
      const port = await freePort();
      const env = containerEnv(service, port);
      expect(env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', AUTH: 'on', MIGRATE_ON_START: 'off' });
      started = performance.now();
      const [file, ...args] = asUser(commandOf(last(runtime, 'CMD')!.rest));
      const child = spawn(file!, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const instance = { name, port, child, output: '', exited: new Promise<number | null>((ok) => child.once('exit', ok)) };
      instances.push(instance);
      child.stdout!.on('data', (d: Buffer) => (instance.output += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (instance.output += d.toString()));
      for (;;) {
        const check = await run(asUser(health), { cwd, env, timeoutMs: 5000 });
        if (check.code === 0) break;
        expect(child.exitCode, `${name} exited:\n${instance.output}`).toBeNull();
        expect(performance.now() - started, `${name} healthy within 60 s:\n${instance.output}`).toBeLessThan(60_000);
        await new Promise((ok) => setTimeout(ok, 250));
      }
      timings.push(`${name}: CMD to healthy ${Math.round(performance.now() - started)} ms`);
      if (process.getuid?.() === 0) expect(readFileSync(`/proc/${child.pid}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\s+${user.uid}\\s`, 'm'));
    }

    // Listening on every interface, with AUTH on; a key made by the image's own command line opens it.
    const direct = `http://127.0.0.1:${instances[0]!.port}`;
    expect((await query(direct, '{ __typename }')).status).toBe(401);
    const keys = await run(asUser(['node', 'dist/server/main.js', 'keys', 'create', '--name', 'replay', '--scopes', 'admin:all']), { cwd, env: containerEnv(COMPOSE.services.migrate!), timeoutMs: 60_000 });
    expect(keys.code, keys.stderr).toBe(0);
    key = keys.stdout.trim();
    const answer = await query(direct, '{ __typename }');
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ data: { __typename: 'Query' } });
    // The image serves the operator console it built (console/dist/), page and assets, without a key.
    const page = await fetch(`${direct}/console`);
    expect(page.status).toBe(200);
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
    expect(script).toBeDefined();
    expect((await fetch(`${direct}${script}`)).status).toBe(200);
  });

  it('behind the proxy’s configuration (HAProxy): round-robin, SSE and graphql-ws events across instances, a drained instance costs no request', { timeout: 90_000 }, async () => {
    expect(instances, 'both instances run').toHaveLength(2);
    // deploy/haproxy.cfg as compose mounts it, with the addresses Docker's network would give: the instances' ports.
    const proxyPort = await freePort();
    let config = readFileSync(join(ROOT, COMPOSE.services.proxy!.volumes![0]!.split(':')[0]!), 'utf8').replace(/^(\s*bind) :\d+$/m, `$1 127.0.0.1:${proxyPort}`);
    for (const { name, port } of instances) config = config.replace(new RegExp(`^(\\s*server ${name}) \\S+`, 'm'), `$1 127.0.0.1:${port}`);
    const configFile = join(work, 'haproxy.cfg');
    writeFileSync(configFile, config);
    proxy = spawn('haproxy', ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let proxyLog = '';
    proxy.stdout!.on('data', (d: Buffer) => (proxyLog += d.toString()));
    proxy.stderr!.on('data', (d: Buffer) => (proxyLog += d.toString()));
    proxy.on('error', (error) => (proxyLog += `${error.message} (npm test installs haproxy: scripts/ci-apt-packages.txt)\n`));
    const url = `http://127.0.0.1:${proxyPort}`;
    await until(`the proxy answers\n${proxyLog}`, async () => ((await fetch(`${url}/healthz`)).ok ? true : undefined), 20_000);

    // Round-robin: each instance counts its share of 10 requests.
    const healthzCount = async (port: number) => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${key}` } })).text();
      return Number(/^gateway_http_requests_total\{method="GET",path="\/healthz",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    const before = await Promise.all(instances.map((i) => healthzCount(i.port)));
    for (let i = 0; i < 10; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const shares = (await Promise.all(instances.map((i) => healthzCount(i.port)))).map((n, i) => n - before[i]!);
    expect(shares).toEqual([5, 5]);

    // An event made through the proxy reaches a subscription held through the proxy, while the stream stays open:
    // over SSE (not held back by the proxy) and over graphql-ws (upgraded). Whichever instance each lands on.
    expect((await (await query(url, 'mutation { createQueue(input: { name: "replayed" }) { name } }')).json()) as object).toEqual({ data: { createQueue: { name: 'replayed' } } });
    let rate = 1;
    const changeRate = () => query(url, `mutation { changeQueueRate(name: "replayed", rate: ${++rate}) { rate } }`);
    const SUBSCRIPTION = 'subscription { queueChanged(name: "replayed") { name rate } }';

    const sse = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = sse.body!.getReader();
    let received = '';
    const firstEvent = (async () => {
      while (!/^data: /m.test(received)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the event stream ended: ${received}`);
        received += new TextDecoder().decode(value);
      }
    })();
    // The subscription is registered some time after the request: change the rate until an event comes.
    await untilSettled(firstEvent, changeRate, 15_000);
    expect(received).toMatch(/^data: \{"data":\{"queueChanged":\{"name":"replayed","rate":\d+\}\}\}$/m);
    await reader.cancel();

    const ws = new WebSocket(`ws://127.0.0.1:${proxyPort}/graphql`, 'graphql-transport-ws');
    const messages: { type: string; payload?: unknown }[] = [];
    ws.on('message', (raw) => messages.push(JSON.parse(raw.toString()) as { type: string }));
    await new Promise((ok, fail) => (ws.once('open', ok), ws.once('error', fail)));
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
    await until('connection_ack', async () => (messages.some((m) => m.type === 'connection_ack') ? true : undefined), 10_000);
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: SUBSCRIPTION } }));
    await untilSettled(until('next', async () => messages.find((m) => m.type === 'next'), 15_000), changeRate, 15_000);
    expect(messages.find((m) => m.type === 'next')!.payload).toMatchObject({ data: { queueChanged: { name: 'replayed' } } });
    ws.close(1000);

    // SIGTERM to one instance (as `docker compose stop gateway-1` sends it): requests through the proxy keep
    // succeeding while it drains and after it is gone.
    const [first] = instances;
    const statuses: number[] = [];
    first!.child.kill('SIGTERM');
    let gone = false;
    void first!.exited.then(() => (gone = true));
    const stopAt = performance.now() + 60_000;
    let after = 0;
    while (after < 10 && performance.now() < stopAt) {
      statuses.push((await query(url, '{ __typename }')).status);
      if (gone) after++;
      await new Promise((ok) => setTimeout(ok, 50));
    }
    expect(await first!.exited, first!.output).toBe(0);
    expect(statuses.length).toBeGreaterThan(40);
    expect(statuses.filter((s) => s !== 200), `${statuses.length} requests while it drained\n${proxyLog.slice(-3000)}`).toEqual([]);
    for (const instance of instances) {
      // The replay starts its instances before the key exists, as compose does: each says so once, at start.
      const lines = instance.output.split('\n');
      expect(lines.filter((line) => line.includes('AUTH=on and the database holds no API key')), `${instance.name}: the no-key warning`).toHaveLength(1);
      const others = lines.filter((line) => !line.includes('AUTH=on and the database holds no API key')).join('\n');
      expect(others, `${instance.name}: no other warning or error line`).not.toMatch(/"level":(40|50|60)/);
    }
    console.log(`container replay: ${[...timings, `as ${user.name}`, `${statuses.length} requests while gateway-1 drained`].join('; ')}`);
  });
});
