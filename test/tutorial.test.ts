import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScratchDir } from './helpers/databases.js';
import { freePort, until } from './helpers/ports.js';

// The README's tutorial, run as written and in order: its shell lines through bash in the clone's directory, each
// answer compared with the JSON the README shows (`…` marks an object or list shown in part), each `text` block
// looked for in what the background commands (the local target, the subscription) printed. Only the ports differ
// (free ones instead of 4000 and 8080) and the embedded database lives in a temporary directory. `npm ci` is not run
// again: the test command that runs this file starts with it.

const ROOT = resolve(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const ELLIPSIS = '\u2026';

interface Block {
  lang: string;
  body: string;
}

function tutorialBlocks(): Block[] {
  const start = README.indexOf('\n## Tutorial');
  const end = README.indexOf('\n## ', start + 1);
  expect(start, 'README has a Tutorial section').toBeGreaterThan(0);
  const section = README.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }));
}

/** Shell lines of a block, continuation lines joined, comments dropped. */
const commandsOf = (body: string): string[] =>
  body
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));

/** The README's JSON with `…` made explicit: an object holding the key `…`, or a list ending with `…`, is partial. */
const parseShown = (text: string): unknown =>
  JSON.parse(text.replaceAll(`, ${ELLIPSIS}}`, `, "${ELLIPSIS}": true}`).replaceAll(`, ${ELLIPSIS}]`, `, "${ELLIPSIS}"]`));

function matches(actual: unknown, shown: unknown): boolean {
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return false;
    const partial = shown.at(-1) === ELLIPSIS;
    const items = partial ? shown.slice(0, -1) : shown;
    if (partial ? actual.length < items.length : actual.length !== items.length) return false;
    return items.every((item, i) => matches(actual[i], item));
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const keys = Object.keys(shown).filter((k) => k !== ELLIPSIS);
    if (!(ELLIPSIS in shown) && Object.keys(actual).length !== keys.length) return false;
    return keys.every((k) => k in actual && matches((actual as Record<string, unknown>)[k], (shown as Record<string, unknown>)[k]));
  }
  return Object.is(actual, shown);
}

const background: { command: string; child: ChildProcess; output: string }[] = [];
const dataDir = runScratchDir('gw-tutorial-');

afterAll(async () => {
  for (const { child } of background) {
    if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGTERM');
  }
  await Promise.all(background.map(({ child }) => (child.exitCode === null ? new Promise((ok) => child.once('exit', ok)) : undefined)));
  // The shell exits at once; the gateway it started (same process group) may still be closing its database in DATA_DIR.
  const groupAlive = (pid: number) => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (const deadline = Date.now() + 15_000; Date.now() < deadline && background.some(({ child }) => child.pid && groupAlive(child.pid)); ) await new Promise((r) => setTimeout(r, 50));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('README tutorial, followed literally', () => {
  it('every step answers what the README shows', { timeout: 180_000 }, async () => {
    const gatewayPort = await freePort();
    const sinkPort = await freePort();
    const env = { ...process.env, PORT: String(gatewayPort), DATA_DIR: dataDir, LOG_LEVEL: 'info', PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` };
    const localize = (command: string) =>
      command
        .replaceAll('localhost:4000', `localhost:${gatewayPort}`)
        .replaceAll('127.0.0.1:8080', `127.0.0.1:${sinkPort}`)
        .replace(/^npm run sink\b/, `npm run sink -- ${sinkPort}`);
    const startInBackground = (command: string) => {
      const child = spawn('bash', ['-c', command], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const entry = { command, child, output: '' };
      child.stdout!.on('data', (d: Buffer) => (entry.output += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (entry.output += d.toString()));
      background.push(entry);
      return entry;
    };
    const run = (command: string) =>
      new Promise<string>((ok, fail) => {
        const child = spawn('bash', ['-c', command], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`${command} exited ${code}: ${err}`))));
      });

    const blocks = tutorialBlocks();
    expect(commandsOf(blocks[0]!.body)[0], 'the tutorial starts from npm ci').toBe('npm ci');
    let lastAnswer: { command: string; output: string } | undefined;
    let steps = 0;
    for (const [index, block] of blocks.entries()) {
      if (block.lang === 'sh') {
        for (const line of commandsOf(block.body)) {
          if (line === 'npm ci') continue;
          const command = localize(line.replace(/\s*&$/, ''));
          if (/\bnpm start\b/.test(command)) {
            const gateway = startInBackground(command);
            await until(`${line} ready (output so far: ${gateway.output.slice(-2000)})`, async () => ((await fetch(`http://127.0.0.1:${gatewayPort}/readyz`)).ok ? true : undefined), 120_000);
          } else if (line.endsWith('&')) {
            const job = startInBackground(command);
            await until(`${line} printed something`, async () => (job.output.length > 0 ? true : undefined), 30_000);
          } else {
            lastAnswer = { command, output: await run(command) };
          }
          steps++;
        }
      } else if (block.lang === 'json') {
        expect(lastAnswer, `json block ${index} follows a command`).toBeDefined();
        const shown = parseShown(block.body);
        const { command } = lastAnswer!;
        // A reader who sees an earlier state (the task still running) runs the command again; so does the test.
        await until(
          `${command}\n  answers ${block.body.trim()}\n  last answer: ${lastAnswer!.output}`,
          async () => {
            if (matches(JSON.parse(lastAnswer!.output), shown)) return true;
            lastAnswer = { command, output: await run(command) };
            return undefined;
          },
          20_000,
        );
        lastAnswer = undefined;
      } else if (block.lang === 'text') {
        for (const expected of block.body.split('\n').map((l) => l.trim()).filter(Boolean)) {
          await until(
            `a background command prints ${expected}\n${background.map((b) => `--- ${b.command}\n${b.output.slice(-1500)}`).join('\n')}`,
            async () => (background.some((b) => b.output.split('\n').some((l) => l.trim() === expected)) ? true : undefined),
            20_000,
          );
        }
      }
    }
    expect(steps).toBeGreaterThanOrEqual(10);
  });
});
