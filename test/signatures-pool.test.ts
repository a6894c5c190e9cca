import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CmsVerifierPool } from '../src/signatures/pool.js';
import { makeFixtures, type Fixtures } from './signatures/fixtures.js';

// The worker_threads pool: same reports as the core, every thread used, the event loop left free.

let f: Fixtures;
let pool: CmsVerifierPool;
beforeAll(() => {
  f = makeFixtures();
  pool = new CmsVerifierPool(2);
});
afterAll(async () => {
  await pool?.close();
  f?.cleanup();
});

describe('CmsVerifierPool', () => {
  it('verifies on worker threads with the anchors of the trust set it is given, per version', async () => {
    const input = { cmsBase64: f.b64('rsa-detached.p7s'), dataBase64: f.b64('data.txt') };
    const trusted = { profile: 'DEFAULT' as const, version: 1, roots: [f.bytes('root.der')] };
    expect((await pool.verify(input, trusted)).status).toBe('VERIFICATION_SUCCESS');
    const other = { profile: 'DEFAULT' as const, version: 2, roots: [f.bytes('untrusted-root.der')] };
    expect((await pool.verify(input, other)).status).toBe('CERTIFICATE_CHAIN_BUILDING_ERROR');
    expect((await pool.verify({ cmsBase64: '%%%' }, trusted)).status).toBe('INPUT_DATA_ERROR');
  });

  it('runs verifications in parallel on both threads while the event loop stays responsive', async () => {
    const input = { cmsBase64: f.b64('ec256-detached.p7s'), dataBase64: f.b64('data.txt') };
    const trust = { profile: 'CLOUD' as const, version: 1, roots: [f.bytes('root.der')] };
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const reports = await Promise.all(Array.from({ length: 40 }, () => pool.verify(input, trust)));
    delay.disable();
    expect(reports.every((r) => r.status === 'VERIFICATION_SUCCESS')).toBe(true);
    expect(pool.threadCount).toBe(2);
    // verification never runs on this thread: the loop is not blocked for a verification's length at a time
    expect(delay.max / 1e6).toBeLessThan(250);
  });

  it('a closed pool refuses work', async () => {
    const p = new CmsVerifierPool(1);
    await p.close();
    await expect(p.verify({ cmsBase64: 'AAAA' }, { profile: 'DEFAULT', version: 1, roots: [] })).rejects.toThrow('closed');
  });
});
