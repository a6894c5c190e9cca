import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startLeaseRenewal } from '../src/runtime/lease-renewal.js';
import { createLoopRegistry } from '../src/kit/supervised-loop.js';

// A lease is reported lost only when it was: a row settled while its renewal ran is not renewed, and that is no loss.

function capturedLog() {
  const lines: { level: number; msg: string; lost?: number; ids?: string[] }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

describe('lease renewal', () => {
  it('a row settled during its renewal is not reported; a row another process took is, once', async () => {
    const { log, lines } = capturedLog();
    const held = new Set(['a', 'b', 'c']);
    let rounds = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const script: ((ids: string[]) => string[])[] = [
      // b settles while the renewal runs (gone from `held` when it returns); c's lease was taken over elsewhere.
      () => {
        held.delete('b');
        return ['a'];
      },
      () => ['a'], // c missed twice and still held: lost
      () => ['a'], // reported already
      () => {
        held.delete('c'); // its attempt ended; its settle found the lease gone
        return ['a'];
      },
      () => ['a'],
    ];
    const seen: string[][] = [];
    const loop = startLeaseRenewal({
      leaseSeconds: 0.6,
      held: () => [...held],
      renew: async (ids) => {
        seen.push(ids);
        const kept = script[Math.min(rounds, script.length - 1)]!(ids);
        if (++rounds === script.length) done();
        return kept;
      },
      logger: log,
      what: 'task',
      loops: createLoopRegistry(),
      limits: { backoff: { baseMs: 10, capMs: 100 }, roundDeadlineMs: 5000 },
    });
    loop.start();
    await finished;
    await loop.stop();
    expect(seen.slice(0, 4)).toEqual([['a', 'b', 'c'], ['a', 'c'], ['a', 'c'], ['a', 'c']]);
    const warnings = lines.filter((l) => /leases were lost/.test(l.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ lost: 1, ids: ['c'] });
  });

  it('rows that settle during every renewal are never reported', async () => {
    const { log, lines } = capturedLog();
    let next = 0;
    const held = new Set<string>();
    let rounds = 0;
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const loop = startLeaseRenewal({
      leaseSeconds: 0.6,
      held: () => {
        // Short attempts come and go: two new ones each time it looks.
        held.add(`t${next++}`);
        held.add(`t${next++}`);
        return [...held];
      },
      renew: async (ids) => {
        // Every row held when the renewal began settles before it returns.
        for (const id of ids) held.delete(id);
        if (++rounds === 5) done();
        return [];
      },
      logger: log,
      what: 'task',
      loops: createLoopRegistry(),
      limits: { backoff: { baseMs: 10, capMs: 100 }, roundDeadlineMs: 5000 },
    });
    loop.start();
    await finished;
    await loop.stop();
    expect(lines.filter((l) => /leases were lost/.test(l.msg))).toEqual([]);
  });
});
