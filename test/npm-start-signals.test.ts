import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { commandOf, descendantsOf, hasEnded, readyz, startNpm, type NpmStart } from './helpers/npm-start.js';
import { until } from './helpers/ports.js';

// A supervisor, a terminal or a script that stops `npm start` signals npm's own pid. npm passes SIGTERM and SIGINT to
// the shell running the script, and a shell that forks (Debian's dash does) would leave the gateway running on its
// port: the script execs, so the signal reaches the gateway, which drains and exits. Alone in its run
// (vitest.config.ts): npm's prestart compiles dist/ when src/ changed.

const ROOT = resolve(import.meta.dirname, '..');

beforeAll(() => {
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
}, 180_000);

describe('npm start stopped by a signal to npm', () => {
  let db: FreshDatabase | undefined;
  let npm: NpmStart | undefined;
  afterEach(async () => {
    npm?.kill();
    await db?.drop();
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('%s to npm stops the gateway: its port closes and no process npm started is left', async (signal) => {
    db = await freshDatabase('pglite');
    npm = await startNpm(db.env);
    await npm.ready;
    const started = descendantsOf(npm.proc.pid!);
    expect(started.map(commandOf)).toContainEqual(expect.stringMatching(/node dist\/server\/main\.js serve$/));

    const npmExited = new Promise((r) => npm!.proc.once('exit', r));
    process.kill(npm.proc.pid!, signal);
    await until(`the port of ${npm.url} closed after ${signal}`, async () => ((await readyz(npm!.url)) === 0 ? true : undefined), 10_000);
    await until(`every process npm started ended after ${signal}: ${started.filter((pid) => !hasEnded(pid)).map(commandOf).join(', ')}`, async () => (started.every(hasEnded) ? true : undefined), 10_000);
    await npmExited;
    // It drained rather than died: the shutdown is the gateway's own, which logs nothing at warn but its errors.
    expect(npm.output()).not.toMatch(/"level":(50|60)/);
  }, 150_000);
});
