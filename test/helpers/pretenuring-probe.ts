import { getHeapSpaceStatistics } from 'node:v8';

// Run by test/heap-tuning.test.ts with `node --expose-gc --no-concurrent-recompilation --import tsx`: prints how many
// bytes of the old generation short-lived objects took after their allocation site had seen its objects survive (0
// unless V8 pretenured the site). With `gateway` as its argument it first imports what src/main.ts imports first.

if (process.argv[2] === 'gateway') await import('../../src/runtime/heap-tuning.js');

const collect = (globalThis as { gc?: (options?: { type: 'minor' | 'major' }) => void }).gc!;
const oldUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;
const make = (i: number) => ({ a: i, b: i + 1, c: null });

let most = 0;
let sink = 0; // read, so that the allocations are not optimised away
for (let round = 0; round < 4; round++) {
  // Every object of the site survives two young collections: V8 may now pretenure it.
  let kept: object[] | null = [];
  for (let i = 0; i < 300_000; i++) kept.push(make(i));
  collect({ type: 'minor' });
  collect({ type: 'minor' });
  kept = null;
  // Objects dropped at once, from the same site: young unless pretenured.
  const before = oldUsed();
  let last: { a: number } | undefined;
  for (let i = 0; i < 500_000; i++) last = make(i);
  most = Math.max(most, oldUsed() - before);
  sink += last!.a;
}
process.stdout.write(`${JSON.stringify({ oldGenerationBytes: most, sink })}\n`);
