/**
 * bench:cms — CMS verifications per second (chain checked) through the HTTP path (POST /v2/verify/cms/cloud,
 * which runs GraphQL verifyCms on the worker pool and writes an audit row) against `openssl cms -verify` on
 * the same files, one process per verification, in the same run. RSA-2048, ECDSA P-256 and GOST 2012-256
 * detached signatures over 1 KiB of data.
 *
 *   npm run bench:cms        (script line: "npm run generate && tsx bench/cms.ts", see docs/performance.md)
 *   BENCH_SECONDS=5 BENCH_CONCURRENCY=8 CMS_WORKERS=0 (= availableParallelism)
 *   BENCH_DB=pglite (default, embedded, audit rows cost CPU in this process) | postgres (a fresh database on
 *   TEST_POSTGRES_URL's server, as the tests make them)
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';
import { freshDatabase } from '../test/helpers/databases.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const OPENSSL_CALLS = Number(process.env.BENCH_OPENSSL_CALLS ?? 60);

const dir = mkdtempSync(join(tmpdir(), 'bench-cms-'));
const script = resolve(import.meta.dirname, '../scripts/make-cms-fixtures.sh');
execFileSync('bash', [script, dir], { stdio: ['ignore', 'ignore', 'inherit'] });
const gost = !existsSync(join(dir, 'NO_GOST'));
const data = Buffer.alloc(1024);
for (let i = 0; i < data.length; i++) data[i] = 32 + ((i * 7) % 95);
writeFileSync(join(dir, 'bench.bin'), data);

interface Case {
  name: string;
  file: string;
  caFile: string;
  env: NodeJS.ProcessEnv;
}
const plain: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'OPENSSL_CONF'));
const gostEnv = { ...process.env, OPENSSL_CONF: join(dir, 'gost.cnf') };
const sign = (out: string, cert: string, key: string, md: string, env: NodeJS.ProcessEnv, certfile?: string) =>
  execFileSync('openssl', ['cms', '-sign', '-binary', '-in', 'bench.bin', '-signer', cert, '-inkey', key, '-md', md, '-outform', 'DER', '-out', out, ...(certfile ? ['-certfile', certfile] : [])], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] });

const cases: Case[] = [];
sign('b-rsa.p7s', 'rsa.pem', 'rsa.key', 'sha256', plain, 'inter.pem');
cases.push({ name: 'RSA-2048 / SHA-256', file: 'b-rsa.p7s', caFile: 'root.pem', env: plain });
sign('b-ec.p7s', 'ec256.pem', 'ec256.key', 'sha256', plain, 'inter.pem');
cases.push({ name: 'ECDSA P-256 / SHA-256', file: 'b-ec.p7s', caFile: 'root.pem', env: plain });
if (gost) {
  sign('b-gost.p7s', 'gost256-A.pem', 'gost256-A.key', 'md_gost12_256', gostEnv);
  cases.push({ name: 'GOST 2012-256 / Streebog-256', file: 'b-gost.p7s', caFile: 'gost-root.pem', env: gostEnv });
}

const verifyArgs = (c: Case) => ['cms', '-verify', '-binary', '-inform', 'DER', '-in', c.file, '-content', 'bench.bin', '-CAfile', c.caFile, '-purpose', 'any', '-out', '/dev/null'];

/** one openssl process per verification, `parallel` at a time */
async function opensslRate(c: Case, parallel: number): Promise<number> {
  execFileSync('openssl', verifyArgs(c), { cwd: dir, env: c.env, stdio: 'ignore' }); // must verify
  let started = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (started < OPENSSL_CALLS) {
      started++;
      await new Promise<void>((ok, fail) =>
        spawn('openssl', verifyArgs(c), { cwd: dir, env: c.env, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? ok() : fail(new Error(`openssl exit ${code}`)))),
      );
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return OPENSSL_CALLS / ((performance.now() - t0) / 1000);
}

/** openssl CPU seconds (user+sys of the children, from bash `times`) per verification: robust to machine load */
function opensslCpuPerCall(c: Case): number {
  const cmd = `for i in $(seq ${OPENSSL_CALLS}); do openssl ${verifyArgs(c).join(' ')} 2>/dev/null || exit 1; done; times`;
  const out = execFileSync('bash', ['-c', cmd], { cwd: dir, env: c.env, encoding: 'utf8' }).trim().split('\n');
  const secs = (t: string) => t.split(/\s+/).reduce((a, x) => { const m = /(\d+)m([\d.]+)s/.exec(x); return m ? a + Number(m[1]) * 60 + Number(m[2]) : a; }, 0);
  return secs(out.at(-1)!) / OPENSSL_CALLS;
}

const trust = join(dir, 'trust');
mkdirSync(trust);
copyFileSync(join(dir, 'root.pem'), join(trust, 'root.pem'));
if (gost) copyFileSync(join(dir, 'gost-root.pem'), join(trust, 'gost-root.pem'));
const database = await freshDatabase(process.env.BENCH_DB === 'postgres' ? 'postgres' : 'pglite');
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...database.env, TRUST_DIR: trust, CMS_WORKERS: process.env.CMS_WORKERS ?? '0' });
const gateway = await startGateway(config, { log: pino({ level: 'silent' }) });

async function gatewayRate(c: Case): Promise<{ rate: number; p50: number; p99: number; cpuPerCall: number }> {
  const body = JSON.stringify({ request: { cmsBase64: readFileSync(join(dir, c.file)).toString('base64'), dataBase64: data.toString('base64') }, auditParameters: { systemId: 'bench' } });
  const once = async () => {
    const res = await fetch(`${gateway.url}/v2/verify/cms/cloud`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const answer = (await res.json()) as { status: string };
    if (answer.status !== 'VERIFICATION_SUCCESS') throw new Error(`${c.name}: ${JSON.stringify(answer).slice(0, 300)}`);
  };
  for (let i = 0; i < 20; i++) await once(); // warm-up: threads, tables, JIT
  let done = 0;
  const latencies: number[] = [];
  const cpu0 = process.cpuUsage();
  const until = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const s = performance.now();
        await once();
        latencies.push(performance.now() - s);
        done++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  return { cpuPerCall: (cpu.user + cpu.system) / 1e6 / done, rate: done / ((performance.now() - t0) / 1000), p50: latencies[Math.floor(latencies.length / 2)]!, p99: latencies[Math.floor(latencies.length * 0.99)]! };
}

console.log(`bench:cms  db=${process.env.BENCH_DB === 'postgres' ? 'postgres' : 'pglite'} cpus=${cpus().length} availableParallelism=${availableParallelism()} workers=${gateway.services.verifier.size} seconds=${SECONDS} concurrency=${CONCURRENCY} openssl calls=${OPENSSL_CALLS} data=1024 B detached, chain checked`);
console.log(['algorithm'.padEnd(30), 'gateway/s', 'p50 ms', 'p99 ms', 'openssl/s', 'openssl x2/s', 'ratio', 'ratio x2', 'gw cpu ms', 'ossl cpu ms', 'cpu ratio'].join('  '));
for (const c of cases) {
  const g = await gatewayRate(c);
  const o1 = await opensslRate(c, 1);
  const o2 = await opensslRate(c, 2);
  const oc = opensslCpuPerCall(c);
  console.log(
    [c.name.padEnd(30), g.rate.toFixed(1).padStart(9), g.p50.toFixed(1).padStart(6), g.p99.toFixed(1).padStart(6), o1.toFixed(1).padStart(9), o2.toFixed(1).padStart(12), (g.rate / o1).toFixed(2).padStart(5), (g.rate / o2).toFixed(2).padStart(8),
      (g.cpuPerCall * 1000).toFixed(2).padStart(9), (oc * 1000).toFixed(2).padStart(11), (oc / g.cpuPerCall).toFixed(2).padStart(9)].join('  '),
  );
}
console.log('ratio = gateway verifications/s over openssl one-process-per-call rate (goal >= 2); ratio x2 = over two openssl processes at a time');
console.log('cpu ms = CPU time per verification (gateway: whole process incl. HTTP client, GraphQL, audit insert, worker threads; openssl: user+sys of one process); cpu ratio = openssl/gateway, load-independent');
await gateway.close();
await database.drop();
rmSync(dir, { recursive: true, force: true });
