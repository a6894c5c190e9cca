import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { createCredentialWatch, EXPIRED_TOKEN, REVOKED_KEY } from '../src/access/credential-watch.js';
import type { Principal } from '../src/access/principal.js';
import type { Unauthenticated } from '../src/access/caller.js';

// The credential watch over time, with the database's answer in the test's hands: an outage ends nothing, a look-up
// that never answers does not wedge the rounds, a revocation found after the outage ends its holders, a token's
// holders end at its expiry and not before. (The watch on real gateways, real sockets and streams, one process and
// two: test/credentials-over-time.test.ts.)

const key = (id: string): Principal => ({ kind: 'key', id, name: id, scopes: [], systemId: null, idpConsent: null, personOid: null, expiresAt: null });
const token = (expiresAt: number): Principal => ({ kind: 'token', id: 'token:sub', name: 'sub', scopes: [], systemId: null, idpConsent: null, personOid: null, expiresAt });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits for `check`, at most `ms` (a loaded machine's timers run late). */
async function until(check: () => boolean, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(10);
}

function logged() {
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'debug' }, new Writable({ write: (c, _e, done) => (lines.push(JSON.parse(String(c)) as { level: number; msg: string }), done()) }));
  return { lines, log };
}

describe('credential watch', () => {
  it('an outage ends nothing and is logged once; the revocation found once the database answers ends the holders', async () => {
    const { lines, log } = logged();
    let answer: 'down' | 'hang' | Set<string> = 'down';
    const watch = createCredentialWatch({
      keyRecheckMs: 100,
      log,
      liveKeys: async () => {
        if (answer === 'down') throw new Error('connection refused');
        if (answer === 'hang') return new Promise<never>(() => undefined);
        return answer;
      },
    });
    const ended: Unauthenticated[] = [];
    watch.hold(key('a'), (why) => ended.push(why));
    watch.hold(key('b'), (why) => ended.push(why));
    await sleep(450);
    expect(ended).toEqual([]);
    expect(lines.filter((l) => l.msg.startsWith('revoked API keys cannot be looked up now'))).toHaveLength(1);
    // A database that stopped answering: each round is abandoned at its bound, the next one starts.
    answer = 'hang';
    await sleep(450);
    expect(ended).toEqual([]);
    // Back, with `a` revoked.
    answer = new Set(['b']);
    await until(() => ended.length > 0);
    expect(ended).toEqual([REVOKED_KEY]);
    expect(lines.some((l) => l.msg === 'revoked API keys can be looked up again')).toBe(true);
    expect(watch.held()).toBe(1);
    watch.close();
  });

  it('a released holder is never ended; recheck runs a round after any in progress', async () => {
    const { log } = logged();
    let live = new Set(['a', 'b']);
    let slow = true;
    const watch = createCredentialWatch({
      keyRecheckMs: 60_000,
      log,
      // The first round reads before the revocation and answers late.
      liveKeys: async () => {
        const answer = live;
        if (slow) await sleep(200);
        return answer;
      },
    });
    const ended: string[] = [];
    const release = watch.hold(key('a'), () => ended.push('a, released'));
    watch.hold(key('b'), () => ended.push('b'));
    const first = watch.recheck();
    await sleep(50);
    live = new Set();
    slow = false;
    release();
    await watch.recheck();
    await first;
    expect(ended).toEqual(['b']);
    expect(watch.held()).toBe(0);
    watch.close();
  });

  it("a token's holders end at its expiry, not before; released ones never", async () => {
    const { log } = logged();
    const watch = createCredentialWatch({ keyRecheckMs: 1000, log, liveKeys: async () => new Set() });
    const at = Date.now() + 400;
    const ended: [string, Unauthenticated, number][] = [];
    watch.hold(token(at), (why) => ended.push(['kept', why, Date.now()]));
    const release = watch.hold(token(at), (why) => ended.push(['released', why, Date.now()]));
    release();
    await sleep(200);
    expect(ended).toEqual([]);
    await until(() => ended.length > 0);
    await sleep(50);
    expect(ended.map(([who, why]) => [who, why])).toEqual([['kept', EXPIRED_TOKEN]]);
    expect(ended[0]![2]).toBeGreaterThanOrEqual(at);
    expect(watch.held()).toBe(0);
    watch.close();
  });
});
