import type { Logger } from '../log.js';
import type { Principal } from './principal.js';
import type { Unauthenticated } from './caller.js';
import { bearerChallenge } from './bearer-challenge.js';

// A credential holds for the life of what it opened, not only at its start. Whatever stays open on a caller's
// credential (a graphql-ws socket, an SSE stream) is held here, and ended when the credential stops being valid:
// - a bearer token at its expiry (`exp` plus the clock tolerance), by a timer of its own;
// - an API key once it is revoked (or deleted), found by one look-up of every held key per round, every
//   `keyRecheckMs`, in whichever process revoked it: the rounds read the database, not the verifier's memory. A
//   revocation made by this process ends its holders at once (`recheck`).
// A round that cannot read the database ends nothing: an outage is not a revocation. Each round is bounded in time,
// so a database that stopped answering cannot wedge the watch; the next round tries again.

/** Why an API key's holders are ended: the same words a new request with that key gets. */
export const REVOKED_KEY: Unauthenticated = {
  message: 'The API key is unknown, malformed or revoked.',
  challenge: bearerChallenge({ error: 'invalid_token', description: 'The API key is unknown, malformed or revoked.' }),
};

/** Why a token's holders are ended at its expiry. */
export const EXPIRED_TOKEN: Unauthenticated = {
  message: 'The bearer token is refused: the token expired.',
  challenge: bearerChallenge({ error: 'invalid_token', description: 'the token expired' }),
};

/** setTimeout's longest wait; a later expiry is waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export interface CredentialWatch {
  /**
   * Follows `principal` while what it opened stays open: `end` runs once, with the reason, when the credential stops
   * being valid. Returns the release (call it when the holder closes; it is safe to call twice).
   */
  hold(principal: Principal, end: (why: Unauthenticated) => void): () => void;
  /** Looks at every held key now (after a revocation made by this process). */
  recheck(): Promise<void>;
  /** Holders followed now (tests and metrics). */
  held(): number;
  /** Stops the rounds and timers; holders are left as they are. */
  close(): void;
}

export interface CredentialWatchOptions {
  /** Of `ids`, those that name a key that still works (not revoked, not deleted). Throws on an outage. */
  liveKeys(ids: readonly string[]): Promise<ReadonlySet<string>>;
  /** How often held keys are looked at (AUTH_CACHE_MS, at least a second). */
  keyRecheckMs: number;
  log: Logger;
  /** Counts holders ended, by why (`revoked`, `expired`). */
  ended?(why: 'revoked' | 'expired'): void;
}

interface Holder {
  end(why: Unauthenticated): void;
  released: boolean;
}

export function createCredentialWatch(options: CredentialWatchOptions): CredentialWatch {
  const { log, keyRecheckMs } = options;
  /** Holders of API keys, by key id. */
  const byKey = new Map<string, Set<Holder>>();
  let tokenHolders = 0;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> | undefined;
  let failing = false;
  let closed = false;

  const endAll = (holders: Iterable<Holder>, why: Unauthenticated, kind: 'revoked' | 'expired') => {
    for (const holder of [...holders]) {
      if (holder.released) continue;
      holder.released = true;
      options.ended?.(kind);
      try {
        holder.end(why);
      } catch (error) {
        log.warn({ err: error }, 'ending what a credential held failed');
      }
    }
  };

  async function lookAtKeys(): Promise<void> {
    const ids = [...byKey.keys()];
    if (ids.length === 0) return;
    // A look-up that outlives a round is abandoned (the database may be gone without closing its connections).
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      options.liveKeys(ids).then(
        (live) => ({ live }),
        (error: unknown) => ({ reason: (error as Error).message }),
      ),
      new Promise<{ reason: string }>((resolve) => (timer = setTimeout(() => resolve({ reason: `no answer within ${keyRecheckMs} ms` }), keyRecheckMs))),
    ]).finally(() => clearTimeout(timer));
    if (!('live' in outcome)) {
      const { reason } = outcome;
      if (!failing) log.warn({ reason }, 'revoked API keys cannot be looked up now; open sockets and streams keep their keys until they can');
      failing = true;
      return;
    }
    if (failing) log.info('revoked API keys can be looked up again');
    failing = false;
    for (const id of ids) {
      if (outcome.live.has(id)) continue;
      const holders = byKey.get(id);
      byKey.delete(id);
      if (holders?.size) {
        log.info({ keyId: id, holders: holders.size }, 'an API key was revoked: its sockets and streams are ended');
        endAll(holders, REVOKED_KEY, 'revoked');
      }
    }
  }

  /** A round after any in progress (one that read before a revocation must not stand for one asked after it). */
  const recheck = (): Promise<void> => {
    const next: Promise<void> = (round ?? Promise.resolve())
      .then(lookAtKeys)
      .catch((error: unknown) => log.warn({ err: error }, 'a look-up of revoked API keys failed'))
      .finally(() => {
        if (round === next) round = undefined;
      });
    round = next;
    return next;
  };

  const schedule = () => {
    if (timer || closed || byKey.size === 0) return;
    timer = setInterval(() => {
      if (byKey.size === 0) {
        clearInterval(timer);
        timer = undefined;
        return;
      }
      if (!round) void recheck();
    }, keyRecheckMs);
    timer.unref();
  };

  function holdKey(keyId: string, holder: Holder): () => void {
    let holders = byKey.get(keyId);
    if (!holders) byKey.set(keyId, (holders = new Set()));
    holders.add(holder);
    schedule();
    return () => {
      holder.released = true;
      const now = byKey.get(keyId);
      now?.delete(holder);
      if (now?.size === 0) byKey.delete(keyId);
    };
  }

  function holdToken(expiresAt: number, holder: Holder): () => void {
    let wait: NodeJS.Timeout | undefined;
    tokenHolders++;
    const release = () => {
      if (wait === undefined && holder.released) return;
      clearTimeout(wait);
      wait = undefined;
      if (!holder.released) tokenHolders--;
      holder.released = true;
    };
    const check = () => {
      const left = expiresAt - Date.now();
      if (left > 0) {
        wait = setTimeout(check, Math.min(left, LONGEST_TIMER_MS));
        wait.unref();
        return;
      }
      wait = undefined;
      if (holder.released) return;
      tokenHolders--;
      endAll([holder], EXPIRED_TOKEN, 'expired');
    };
    check();
    return release;
  }

  return {
    hold(principal, end) {
      const holder: Holder = { end, released: false };
      if (principal.kind === 'key') return holdKey(principal.id, holder);
      if (principal.expiresAt !== null) return holdToken(principal.expiresAt, holder);
      return () => {
        holder.released = true;
      };
    },
    recheck,
    held: () => tokenHolders + [...byKey.values()].reduce((n, set) => n + set.size, 0),
    close() {
      closed = true;
      clearInterval(timer);
      timer = undefined;
    },
  };
}
