import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../src/cli/commands.js';
import { renderHelp } from '../src/cli/help.js';

// What npm's scripts do before the gateway runs: scripts/generate.mjs before every script that needs src/generated/
// (postinstall and the pre-scripts), which must cost nothing when nothing it reads changed; and `npm start`, which
// compiles dist/ first when src/ changed. Alone in its run (vitest.config.ts): it may rewrite src/generated/, which
// every other file imports, and dist/, and it bounds a time.

const ROOT = resolve(import.meta.dirname, '..');

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; output: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolvePromise) => {
    const child = spawn(file, args, { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (d) => ((stdout += d), (output += d)));
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => resolvePromise({ code, stdout, output, ms: performance.now() - started }));
  });
}

const generate = () => run('node', ['scripts/generate.mjs']);

describe('code generation (postinstall and the pre-scripts)', () => {
  it('generate.mjs does nothing, quickly and silently, when its inputs did not change', async () => {
    const client = join(ROOT, 'src/generated/prisma/client.ts');
    await generate(); // whatever the tree's state, it is up to date after this
    const before = statSync(client).mtimeMs;
    const again = await generate();
    expect(again.code, again.output).toBe(0);
    expect(again.output).toBe('');
    expect(statSync(client).mtimeMs).toBe(before);
    expect(again.ms).toBeLessThan(2000);
  }, 60_000);
});

describe('npm start', () => {
  it('`npm start -- --help` prints the help of serve and does not start the server', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'gw-start-'));
    try {
      const outcome = await run('npm', ['start', '--silent', '--', '--help'], { LOG_LEVEL: 'warn', DATA_DIR: join(parent, 'data') });
      expect(outcome.code, outcome.output).toBe(0);
      expect(outcome.stdout).toContain(renderHelp(COMMANDS.find((c) => c.path[0] === 'serve')!));
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 70_000);
});

describe("npm start's prestart (build.mjs --if-stale)", () => {
  const build = () => run('node', ['scripts/build.mjs', '--if-stale']);
  const mtime = (f: string) => statSync(join(ROOT, f)).mtimeMs;

  it('inputs of unchanged size and time: done without reading any file, the stamps included', async () => {
    const first = await build(); // compiles whatever changed; dist/ and its records are current after it
    expect(first.code, first.output).toBe(0);
    const stamp = join(ROOT, 'dist/.inputs.sha256');
    const [text, st] = [readFileSync(stamp, 'utf8'), statSync(stamp)];
    const main = mtime('dist/main.js');
    // Its time as build.mjs records it (whole milliseconds), given back without the rounding of a Date.
    const sameTime = (Math.floor(st.mtimeMs) + 0.5) / 1000;
    try {
      // A stamp that no longer matches, of the same size and time: only a run that reads it would notice.
      writeFileSync(stamp, text.replace(/./g, (c) => (c === '0' ? '1' : '0')));
      utimesSync(stamp, sameTime, sameTime);
      const again = await build();
      expect(again.code, again.output).toBe(0);
      expect(again.output).toBe('');
      expect(readFileSync(stamp, 'utf8')).not.toBe(text);
      expect(mtime('dist/main.js')).toBe(main);
    } finally {
      writeFileSync(stamp, text);
      utimesSync(stamp, sameTime, sameTime);
    }
  }, 300_000);

  it('a touched file is compared by content: the same, nothing is compiled and the times are written down again', async () => {
    expect((await build()).code).toBe(0);
    const main = mtime('dist/main.js');
    const stats = mtime('dist/.inputs.stat');
    const touched = new Date();
    utimesSync(join(ROOT, 'src/kit/jitter.ts'), touched, touched);
    const after = await build();
    expect(after.code, after.output).toBe(0);
    expect(after.output).toBe('');
    expect(mtime('dist/main.js')).toBe(main);
    const rewritten = mtime('dist/.inputs.stat');
    expect(rewritten).toBeGreaterThan(stats);
    expect((await build()).code).toBe(0);
    expect(mtime('dist/.inputs.stat')).toBe(rewritten);
  }, 300_000);
});
