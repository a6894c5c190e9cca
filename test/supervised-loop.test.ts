import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../src/kit/backoff.js';
import { createLoopRegistry, superviseLoop, type LoopState } from '../src/kit/supervised-loop.js';
import { settleUntilLanded } from '../src/kit/settle-retry.js';
import { sleep } from './helpers/sink.js';

// The one loop every worker runs on, with real timers: it never gives up, backs off with jitter up to its cap,
// logs the change of state once each way, reports it, and stops at once however long its back-off has grown.

function capturedLog() {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

describe('backoffDelay', () => {
  it('grows exponentially from the base, never above the cap, jittered between half and all of it', () => {
    const policy = { baseMs: 100, capMs: 30_000 };
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(4, policy, () => 1)).toBe(800);
    expect(backoffDelay(4, policy, () => 0)).toBe(400);
    expect(backoffDelay(50, policy, () => 1)).toBe(30_000);
    expect(backoffDelay(1000, policy, () => 0)).toBe(15_000);
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(12, policy);
      expect(d).toBeGreaterThanOrEqual(15_000);
      expect(d).toBeLessThanOrEqual(30_000);
    }
  });
});

describe('superviseLoop', () => {
  it('never gives up: 60 failed rounds in a row, then it recovers; one warning and one recovery line, state reported', async () => {
    const { log, lines } = capturedLog();
    const registry = createLoopRegistry();
    let calls = 0;
    const states = new Set<LoopState>();
    const loop = registry.add(
      superviseLoop({
        name: 'flaky',
        log,
        backoff: { baseMs: 1, capMs: 4 },
        roundDeadlineMs: 5000,
        async round() {
          calls += 1;
          states.add(registry.statuses()[0]!.state);
          if (calls <= 60) throw new Error(`database down (${calls})`);
          return 10;
        },
      }),
    );
    loop.start();
    await expect.poll(() => calls, { timeout: 5000 }).toBeGreaterThan(62);
    expect(states).toContain('backing-off');
    expect(registry.statuses()).toEqual([{ name: 'flaky', state: 'running', failures: 0, stalls: 0 }]);
    await loop.stop();
    expect(registry.statuses()[0]!.state).toBe('stopped');
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.map((l) => l.msg)).toEqual(['flaky failing; retrying with back-off until it recovers']);
    expect(lines.filter((l) => l.level === 30).map((l) => l.msg)).toEqual(['flaky recovered']);
    expect(lines.filter((l) => l.level === 20)).toHaveLength(59); // the other failures, at debug only
  });

  it('stop() ends a long back-off at once; ordinary wake-ups do not cut a back-off, poll() does', async () => {
    const { log } = capturedLog();
    let calls = 0;
    const loop = superviseLoop({
      name: 'down',
      log,
      backoff: { baseMs: 60_000, capMs: 60_000 },
      roundDeadlineMs: 5000,
      async round() {
        calls += 1;
        throw new Error('still down');
      },
    });
    loop.start();
    await expect.poll(() => loop.status().state).toBe('backing-off');
    loop.nudge();
    await sleep(50); // kept: that a nudge does not cut a fault's back-off short is what is checked
    expect(calls).toBe(1);
    loop.poll();
    await expect.poll(() => calls).toBe(2);
    const started = Date.now();
    await loop.stop();
    expect(Date.now() - started).toBeLessThan(200);
    expect(loop.status()).toEqual({ name: 'down', state: 'stopped', failures: 2, stalls: 0 });
  });

  it('a round in progress when stop() comes sees its signal aborted, and no round follows', async () => {
    const { log } = capturedLog();
    let calls = 0;
    let aborted: boolean | undefined;
    const loop = superviseLoop({
      name: 'claiming',
      log,
      backoff: { baseMs: 1, capMs: 1 },
      roundDeadlineMs: 5000,
      async round(signal) {
        calls += 1;
        await sleep(100); // the round's own work
        aborted = signal.aborted;
        return 0;
      },
    });
    loop.start();
    await expect.poll(() => calls).toBe(1); // the round is in progress
    await loop.stop();
    expect(aborted).toBe(true);
    expect(calls).toBe(1);
  });
});

describe('superviseLoop round deadline', () => {
  it('a round that never returns is abandoned at its deadline (its signal aborted): the loop is stalled, says so once, starts again, and recovers when a round completes', async () => {
    const { log, lines } = capturedLog();
    const registry = createLoopRegistry();
    const signals: AbortSignal[] = [];
    let calls = 0;
    let release!: () => void;
    const hung = new Promise<number>((resolve) => (release = () => resolve(5)));
    const states: LoopState[] = [];
    const loop = registry.add(
      superviseLoop({
        name: 'hanging',
        log,
        backoff: { baseMs: 1, capMs: 1 },
        roundDeadlineMs: 150,
        round(signal) {
          calls += 1;
          signals.push(signal);
          states.push(registry.statuses()[0]!.state);
          // Two rounds wait on something that never answers (a statement to a server that vanished), then they work.
          return calls <= 2 ? hung : Promise.resolve(60_000);
        },
      }),
    );
    const started = Date.now();
    loop.start();
    await expect.poll(() => calls, { timeout: 3000 }).toBe(3);
    // Two deadlines passed, one after the other, without waiting for the hung rounds.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(signals.slice(0, 2).map((s) => s.aborted)).toEqual([true, true]);
    expect(signals[2]!.aborted).toBe(false);
    expect(states).toEqual(['running', 'stalled', 'stalled']);
    await expect.poll(() => registry.statuses()[0]!.state).toBe('running');
    expect(registry.statuses()[0]).toEqual({ name: 'hanging', state: 'running', failures: 0, stalls: 2 });
    const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toEqual(['hanging stalled: a round did not finish within 150 ms (WORKER_ROUND_DEADLINE_MS); abandoned it and starting again with back-off until a round completes']);
    expect(lines.filter((l) => l.level === 30).map((l) => l.msg)).toEqual(['hanging recovered']);
    // The abandoned rounds ending late changes nothing.
    release();
    await sleep(20); // lets the late ends run
    expect(registry.statuses()[0]!.state).toBe('running');
    await loop.stop();
  });

  it('stop() waits for a round that does not return only until the deadline it is given', async () => {
    const { log } = capturedLog();
    let aborted = false;
    const loop = superviseLoop({
      name: 'stuck',
      log,
      backoff: { baseMs: 1, capMs: 1 },
      roundDeadlineMs: 60_000,
      round(signal) {
        signal.addEventListener('abort', () => (aborted = true));
        return new Promise<number>(() => undefined);
      },
    });
    loop.start();
    await sleep(20); // the round is under way
    const started = Date.now();
    await loop.stop(Date.now() + 200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(aborted).toBe(true);
    expect(loop.status().state).toBe('stopped');
  });
});

describe('settleUntilLanded', () => {
  it('retries a failing write until it lands; a resync (pollAll) retries at once; the deadline makes it give up', async () => {
    const { log, lines } = capturedLog();
    const loops = createLoopRegistry();
    let attempts = 0;
    const landed = settleUntilLanded(
      'settle',
      async () => {
        attempts += 1;
        if (attempts < 4) throw new Error('connection terminated');
        return 'ok';
      },
      { backoff: { baseMs: 60_000, capMs: 60_000 }, loops, log, signal: new AbortController().signal },
    );
    for (let i = 0; i < 3; i++) {
      await expect.poll(() => attempts).toBe(i + 1);
      loops.pollAll();
    }
    await expect(landed).resolves.toBe('ok');
    expect(lines.filter((l) => l.level === 40)).toHaveLength(1);

    const deadline = new AbortController();
    let tries = 0;
    const gaveUp = settleUntilLanded('settle', () => (tries++, Promise.reject(new Error('down'))), { backoff: { baseMs: 60_000, capMs: 60_000 }, loops, log, signal: deadline.signal });
    await expect.poll(() => tries).toBe(1); // it failed once and backs off now
    deadline.abort();
    await expect(gaveUp).rejects.toThrow('down');
  });
});
