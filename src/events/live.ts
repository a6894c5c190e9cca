import type { BusSignal, EventBus, EventTopic } from './bus.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { backoffDelay } from '../runtime/backoff.js';

// Subscriptions follow one key of a topic. Each event says what to emit; after a resync (the LISTEN connection was
// lost and came back) the subscription re-reads and emits the current state only if it changed during the gap.

const DONE: IteratorResult<never> = { value: undefined, done: true };

/**
 * Emits what `init` answers (awaited on the first read), then what `handle` answers for each signal about `key`.
 * After a value `endsAfter` accepts, the stream completes. Returns are immediate, even while waiting for the next
 * signal, so a closed subscription holds nothing.
 */
export function followKey<T>(
  bus: EventBus,
  topic: EventTopic,
  key: string,
  handle: (signal: BusSignal, closed: AbortSignal) => Promise<readonly T[]>,
  init?: () => Promise<readonly T[]>,
  endsAfter?: (value: T) => boolean,
): AsyncIterableIterator<T> {
  const signals = bus.subscribe(topic, key);
  let started: Promise<void> | undefined;
  let pending: T[] = [];
  let closed = false;
  let ended = false;
  const closing = new AbortController();
  const close = async (): Promise<IteratorResult<T>> => {
    closed = true;
    closing.abort();
    pending = [];
    await signals.return?.();
    return DONE;
  };
  return {
    async next() {
      try {
        await (started ??= (async () => {
          pending = [...((await init?.()) ?? [])];
        })());
        if (ended) return await close();
        while (pending.length === 0) {
          if (closed) return DONE;
          const signal = await signals.next();
          if (signal.done || closed) return DONE;
          pending = [...(await handle(signal.value, closing.signal))];
        }
        if (closed) return DONE;
        const value = pending.shift()!;
        if (endsAfter?.(value)) {
          ended = true;
          pending = [];
        }
        return { value, done: false };
      } catch (error) {
        await close();
        throw error;
      }
    },
    return: close,
    async throw(error: unknown) {
      await close();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

export interface LiveStateOptions<T> {
  /** The current state (read when the subscription starts, to compare with after a resync, and after a resync). */
  read: () => Promise<T>;
  /** The state an event announces; default: read() again. */
  fromEvent?: (detail: string) => T | Promise<T>;
  /** Equal fingerprints mean no change; default: the JSON text. */
  fingerprint?: (state: T) => string;
  /** Whether a state found after a resync is worth emitting (default: any). */
  emitsAfterResync?: (state: T) => boolean;
  /**
   * A state after which nothing more will happen by itself: it is the last one emitted, then the subscription
   * completes. Found already at the start, it is emitted at once, so a late subscriber does not wait for ever.
   */
  isFinal?: (state: T) => boolean;
}

const jsonFingerprint = (state: unknown) => JSON.stringify(state, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

/** The state of one key after every event, and after a resync when it changed while events could not arrive. */
export function liveState<T>(bus: EventBus, topic: EventTopic, key: string, options: LiveStateOptions<T>): AsyncIterableIterator<T> {
  const fingerprint = options.fingerprint ?? jsonFingerprint;
  let last: string | undefined;
  return followKey(
    bus,
    topic,
    key,
    async (signal, closed) => {
      let state: T;
      if (signal.kind === 'event') {
        try {
          state = await (options.fromEvent ? options.fromEvent(signal.detail) : options.read());
          last = fingerprint(state);
          return [state];
        } catch (error) {
          // A transient fault of the read that follows a change does not end the subscription (standard graphql-ws
          // and SSE clients do not retry one that ended): it reads again until the database answers, and the
          // subscriber gets the state then, as after a resync.
          if (!isDatabaseUnavailable(error)) throw error;
          const current = await readOnceBack(options.read, closed);
          if (current === undefined) return [];
          state = current.state;
        }
      } else {
        try {
          state = await options.read();
        } catch {
          return []; // still unreachable: the next event or resync tries again
        }
      }
      const now = fingerprint(state);
      if (now === last) return [];
      last = now;
      return options.emitsAfterResync && !options.emitsAfterResync(state) ? [] : [state];
    },
    async () => {
      const state = await options.read();
      last = fingerprint(state);
      return options.isFinal?.(state) ? [state] : [];
    },
    options.isFinal,
  );
}

/**
 * `read()`, and when the database does not answer, again with back-off until it does or the subscription closes
 * (then undefined): a subscription's reads outlast a transient fault instead of ending the subscription.
 */
export async function readUntilAnswered<T>(read: () => Promise<T>, closed: AbortSignal): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    return (await readOnceBack(read, closed))?.state;
  }
}

/** Reads again, with back-off, until the database answers or the subscription closes (then undefined). */
async function readOnceBack<T>(read: () => Promise<T>, closed: AbortSignal): Promise<{ state: T } | undefined> {
  for (let failures = 1; !closed.aborted; failures++) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, backoffDelay(failures, RETRY_BACKOFF));
      closed.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        closed.removeEventListener('abort', done);
        resolve();
      }
    });
    if (closed.aborted) return undefined;
    try {
      return { state: await read() };
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
    }
  }
  return undefined;
}

/** A subscription waits at most this long between reads while the database does not answer. */
const RETRY_BACKOFF = { baseMs: 100, capMs: 2000 };
