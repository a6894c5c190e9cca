import { execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { LineDestination } from '../src/log.js';

// The gateway's log destination: info lines gathered and written together, warnings at once after every line before
// them, nothing left behind when the process exits.

const ROOT = resolve(import.meta.dirname, '..');

function logToFile(flushMs = 50) {
  const path = join(mkdtempSync(join(tmpdir(), 'log-')), 'out.log');
  const fd = openSync(path, 'w');
  const destination = new LineDestination(fd, flushMs);
  const log = pino({ level: 'info', base: null }, destination);
  const lines = () => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg);
  return { log, lines, close: () => closeSync(fd) };
}

describe('log destination', () => {
  it('gathers info lines and writes them together within the flush time, in order', async () => {
    const { log, lines, close } = logToFile(50);
    log.info('one');
    log.info('two');
    expect(lines()).toEqual([]);
    await new Promise((resolveWait) => setTimeout(resolveWait, 120));
    expect(lines()).toEqual(['one', 'two']);
    close();
  });

  it('writes a warning at once, with every line before it, in order', () => {
    const { log, lines, close } = logToFile(60_000);
    log.info('before');
    log.warn('warned');
    log.info('after');
    log.error('failed');
    expect(lines()).toEqual(['before', 'warned', 'after', 'failed']);
    close();
  });

  it('writes at 16 KB whatever the time', () => {
    const { log, lines, close } = logToFile(60_000);
    for (let i = 0; i < 400; i++) log.info(`line ${i} ${'x'.repeat(40)}`);
    const written = lines();
    expect(written.length).toBeGreaterThan(200);
    expect(written.length).toBeLessThan(400);
    expect(written[0]).toMatch(/^line 0 /);
    close();
  });

  it('writes what it holds when the process exits, exit() included', () => {
    const script = `
      const { createLogger } = await import('./src/log.ts');
      const log = createLogger('info');
      for (let i = 0; i < 3; i++) log.info('line ' + i);
      process.exit(3);`;
    let out = '';
    try {
      execFileSync(join(ROOT, 'node_modules/.bin/tsx'), ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    } catch (error) {
      expect((error as { status: number }).status).toBe(3);
      out = (error as { stdout: string }).stdout;
    }
    expect(out.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(['line 0', 'line 1', 'line 2']);
  });
});
