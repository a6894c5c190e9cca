import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { heapFlags, NO_PRETENURING } from '../src/runtime/heap-tuning.js';

const ROOT = join(import.meta.dirname, '..');
const NODE = join(ROOT, 'node_modules/node/bin/node');

/**
 * Bytes of old generation that objects dropped at once took in a fresh process (test/helpers/pretenuring-probe.ts).
 * The optimising compiler runs on the main thread there: on a loaded machine its background thread finished too late
 * for V8 to pretenure the probe's site in any of six processes, and the test showed nothing.
 */
async function probe(mode: 'gateway' | 'default'): Promise<number> {
  const { stdout } = await promisify(execFile)(NODE, ['--expose-gc', '--no-concurrent-recompilation', '--import', 'tsx', 'test/helpers/pretenuring-probe.ts', mode], { cwd: ROOT, timeout: 30_000 });
  return (JSON.parse(stdout) as { oldGenerationBytes: number }).oldGenerationBytes;
}

describe('heap tuning (src/runtime/heap-tuning.ts)', () => {
  it('turns allocation-site pretenuring off unless the command line chose', () => {
    expect(heapFlags([])).toEqual([NO_PRETENURING]);
    expect(heapFlags(['--enable-source-maps'])).toEqual([NO_PRETENURING]);
    expect(heapFlags(['--allocation-site-pretenuring'])).toEqual([]);
    expect(heapFlags(['--no-allocation_site_pretenuring'])).toEqual([]);
  });

  it('keeps short-lived objects young where V8 alone would pretenure their site', async () => {
    // V8's decision depends on when its optimising compiler ran: a few fresh processes, until one shows it.
    let pretenured = 0;
    for (let attempt = 0; attempt < 6 && pretenured < 1_000_000; attempt++) pretenured = await probe('default');
    expect(pretenured, 'this V8 pretenures the probe site on its own (else the probe shows nothing)').toBeGreaterThan(1_000_000);
    for (let attempt = 0; attempt < 3; attempt++) expect(await probe('gateway')).toBeLessThan(100_000);
  }, 120_000);
});
