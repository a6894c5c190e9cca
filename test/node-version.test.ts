import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAtLeast, requiredRange, wrongNodeLine } from '../src/cli/node-version.js';

// The compiled gateway started by a Node older than package.json's engines.node (the system's Node 20, where the
// project's own is node_modules/.bin/node): one line naming both versions and how to run the project's Node, exit 1,
// nothing opened. Alone in its run (vitest.config.ts): it compiles dist/ when src/ changed.

const ROOT = resolve(import.meta.dirname, '..');
const RANGE = requiredRange(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** Every `node` on PATH and the usual system places, but the project's own, with its version. */
function otherNodes(): { path: string; version: string }[] {
  const onPath = (process.env.PATH ?? '').split(':').filter((dir) => dir && !dir.includes('node_modules')).map((dir) => join(dir, 'node'));
  const candidates = [...new Set([...onPath, '/usr/bin/node', '/usr/local/bin/node'])].filter((path) => existsSync(path));
  return candidates.flatMap((path) => {
    const run = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' });
    return run.status === 0 ? [{ path, version: run.stdout.trim() }] : [];
  });
}

const older = otherNodes().find((node) => !isAtLeast(node.version, RANGE));

describe('the Node a command runs on', () => {
  it('engines.node is read from package.json; without it, 24', () => {
    expect(RANGE).toMatch(/\d/);
    expect(requiredRange('{"engines":{"node":">=24.5"}}')).toBe('>=24.5');
    expect(requiredRange('{}')).toBe('>=24');
    expect(requiredRange(undefined)).toBe('>=24');
    expect(isAtLeast('20.20.2', '>=24.5')).toBe(false);
    expect(isAtLeast('24.4.1', '>=24.5')).toBe(false);
    expect(isAtLeast('24.5.0', '>=24.5')).toBe(true);
    expect(isAtLeast('25.0.0', '^24.5.0')).toBe(true);
    expect(isAtLeast(process.versions.node, RANGE)).toBe(true);
  });

  it('the line names a source entry point through tsx', () => {
    expect(wrongNodeLine('20.20.2', '>=24.5', ['/usr/bin/node', join(ROOT, 'src/main.ts'), 'migrate'], ROOT)).toContain('`npx tsx src/main.ts migrate`');
  });

  describe.skipIf(!older)(`dist/main.js and the bundle on ${older ? `Node ${older.version} (${older.path})` : 'an older Node: none on this machine, nothing to run'}`, () => {
    const parent = mkdtempSync(join(tmpdir(), 'gw-node-version-'));
    afterAll(() => rmSync(parent, { recursive: true, force: true }));
    beforeAll(() => {
      const build = spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
      expect(build.status, build.stderr).toBe(0);
    }, 180_000);

    const runs = ['dist/main.js', 'dist/server/main.js'].flatMap((entry) => ['serve', 'migrate', 'keys list'].map((command) => [entry, command] as const));
    it.each(runs)('%s %s: one line with both versions and how to run it, exit 1, nothing opened', (entry, command) => {
      const dataDir = join(parent, 'data');
      const run = spawnSync(older!.path, [entry, ...command.split(' ')], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1', AUTH: 'off', DATA_DIR: dataDir },
        timeout: 20_000,
      });
      expect(run.status, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `This is Node ${older!.version} and the gateway needs Node ${RANGE} (package.json engines.node): run it through npm (\`npm start\`, \`npm run <script>\`), which runs the project's own Node, or as \`node_modules/.bin/node ${entry} ${command}\`.\n`,
      );
      expect(existsSync(dataDir)).toBe(false);
    });
  });
});
