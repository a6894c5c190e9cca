import type { BusSignal, EventBus, EventTopic } from './bus.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { backoffDelay } from '../kit/backoff.js';

// Subscriptions follow one key of a topic through a feed: one per key (and variant) in a process, whatever the number
// of subscribers and their transport. The feed takes the key's signals from the event bus and does the reading once
// for all of them: after an event, one read whose state every subscriber gets (each resolves its own selection of
// it); after a resync (the LISTEN connection was lost and came back), one re-read, sent to those for whom it changed
// during the gap. A subscriber only reads alone when it starts (the state a final-state check and a later resync
// compare with), and subscribers that start together share that read too.
//
// A key that changes faster than its state is worth sending is coalesced: a feed that reads its state starts one read
// per STATE_WINDOW_MS at most, always one after the last event, and a subscriber that has not taken the state it was
// given yet gets the newer one in its place. Streams whose every value counts (a task's transitions, which events
// carry themselves; a job's instance changes) are sent whole and in order.

/** Reads of a key's state after events start at least this far apart: subscribers get at most one state per window. */
export const STATE_WINDOW_MS = 100;
/** Followers woken in one event-loop turn: about as many as take a few milliseconds to execute and write. */
const WAKE_CHUNK = 256;
/** A feed waits at most this long between reads while the database does not answer. */
const RETRY_BACKOFF = { baseMs: 100, capMs: 2000 };

const DONE: IteratorResult<never> = { value: undefined, done: true };

/** One value for a subscriber; `ifChanged`: sent only when it differs from the last one the subscriber got. */
interface Entry<T> {
  value: T;
  fingerprint: string;
  ifChanged: boolean;
}

let lastFollowerSeq = 0;

/**
 * One subscriber of a feed, read as an async iterator. Its values wait in `pending` until it asks: all of them in
 * order (`every`), or only the newest (`latest`). Returns are immediate, even while it waits, and leave the feed.
 */
class Follower<T> implements AsyncIterableIterator<T> {
  readonly seq = ++lastFollowerSeq;
  readonly joinedAt = Date.now();
  /** It is blocked in next() with nothing to take. */
  waiting = false;
  private pending: Entry<T>[] = [];
  private lastFingerprint: string | undefined;
  private ended = false;
  private closed = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly policy: 'every' | 'latest',
    private readonly isFinal: ((value: T) => boolean) | undefined,
    private readonly leave: (follower: Follower<T>) => void,
    /** Whether it has the state it starts from (else begin() gives it). */
    private started: boolean,
    /**
     * Set when its first value is the state it starts from (a view that would otherwise read it beside the
     * subscription): whether that state is sent (a task not found yet is not).
     */
    private readonly sendsStart?: (value: T) => boolean,
  ) {}

  get open(): boolean {
    return !this.closed;
  }

  get ready(): boolean {
    return this.started && this.waiting;
  }

  /** Adds `entry` to what it has to take; its feed wakes it (poke) in turn. False when it takes nothing more. */
  push(entry: Entry<T>): boolean {
    if (this.closed || this.ended) return false;
    const previous = this.policy === 'latest' ? this.pending.at(-1) : undefined;
    // A state replaced before it was taken still counts as a change when the one in its place is sent.
    if (previous) this.pending[this.pending.length - 1] = { ...entry, ifChanged: previous.ifChanged && entry.ifChanged };
    else this.pending.push(entry);
    return true;
  }

  /** The state it starts from: sent at once (and the last) when final, else what later states are compared with. */
  begin(value: T, fingerprint: string): void {
    if (this.closed || this.started) return;
    this.started = true;
    this.lastFingerprint = fingerprint;
    const start = { value, fingerprint, ifChanged: false };
    if (this.isFinal?.(value)) this.pending = [start];
    else if (this.sendsStart?.(value)) this.pending.unshift(start);
    this.poke();
  }

  fail(error: unknown): void {
    if (this.closed || this.ended) return;
    this.failure ??= { error };
    this.poke();
  }

  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.closed) return DONE;
      if (this.failure) {
        this.close();
        throw this.failure.error;
      }
      if (this.started) {
        const entry = this.pending.shift();
        if (entry) {
          if (entry.ifChanged && entry.fingerprint === this.lastFingerprint) continue;
          this.lastFingerprint = entry.fingerprint;
          if (this.isFinal?.(entry.value)) {
            this.ended = true;
            this.pending = [];
          }
          return { value: entry.value, done: false };
        }
        if (this.ended) return this.close();
      }
      this.waiting = true;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.waiting = false;
    }
  }

  return(): Promise<IteratorResult<T>> {
    return Promise.resolve(this.close());
  }

  async throw(error: unknown): Promise<IteratorResult<T>> {
    this.close();
    throw error;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private close(): IteratorResult<T> {
    if (!this.closed) {
      this.closed = true;
      this.pending = [];
      this.leave(this);
    }
    this.poke();
    return DONE;
  }

  poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** What a feed sends after a read: `ifChanged` when the read followed only resyncs or faults, not an event. */
type Deliver<R> = (result: R, ifChanged: boolean, upToSeq: number) => void;

/**
 * The reading of one key, for every follower: one read at a time, started at least `windowMs` after the one before,
 * and one more after an event that came during a read. A read the database does not answer is tried again with
 * back-off, and then counts as a resync (subscribers get its state only if it changed); any other failure ends the
 * followers it was for.
 */
abstract class Feed<T, R> {
  readonly followers = new Set<Follower<T>>();
  /** Followers given something they have not been woken for yet, in the order they were given it. */
  private readonly toWake = new Set<Follower<T>>();
  private wakeScheduled = false;
  private readonly unwatch: () => void;
  private stopped = false;
  private reading = false;
  private timer: NodeJS.Timeout | undefined;
  private wantEvent = false;
  private wantResync = false;
  /** When the next read may start (performance.now()): a window after the time the last one was due. */
  private nextReadAt = Number.NEGATIVE_INFINITY;
  private failures = 0;

  constructor(
    private readonly registry: Map<string, Feed<unknown, unknown>>,
    private readonly id: string,
    readonly topic: EventTopic,
    readonly key: string,
    bus: EventBus,
    private readonly windowMs: number,
  ) {
    registry.set(id, this as unknown as Feed<unknown, unknown>);
    this.unwatch = bus.watch(topic, key, (signal) => this.signal(signal));
  }

  /** No read runs or waits: everything signalled so far has been sent. */
  get idle(): boolean {
    return !this.reading && this.timer === undefined && !this.wantEvent && !this.wantResync && this.toWake.size === 0;
  }

  protected abstract read(): Promise<R>;
  protected abstract deliver: Deliver<R>;

  protected signal(signal: BusSignal): void {
    if (signal.kind === 'event') this.wantEvent = true;
    else this.wantResync = true;
    this.schedule();
  }

  /**
   * Sends `entry` to the followers that joined up to `upToSeq` (those a read started after). Each gets it at once;
   * they are woken to take it WAKE_CHUNK at a time, one event-loop turn each, so that a feed with many followers lets
   * reads and writes through between chunks, and a follower not woken yet when a newer state comes takes only that one.
   */
  protected send(entry: Entry<T>, upToSeq = Number.POSITIVE_INFINITY, keep?: (follower: Follower<T>) => boolean): void {
    for (const follower of this.followers) {
      if (follower.seq <= upToSeq && (!keep || keep(follower)) && follower.push(entry)) this.toWake.add(follower);
    }
    if (!this.wakeScheduled) this.wakeChunk();
  }

  private wakeChunk = (): void => {
    this.wakeScheduled = false;
    let woken = 0;
    for (const follower of this.toWake) {
      this.toWake.delete(follower);
      follower.poke();
      if (++woken === WAKE_CHUNK) break;
    }
    if (this.toWake.size > 0) {
      this.wakeScheduled = true;
      setImmediate(this.wakeChunk);
    }
  };

  leave = (follower: Follower<T>): void => {
    this.followers.delete(follower);
    this.toWake.delete(follower);
    if (this.followers.size > 0 || this.stopped) return;
    this.stopped = true;
    this.unwatch();
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.registry.get(this.id) === (this as unknown)) this.registry.delete(this.id);
  };

  private schedule(): void {
    if (this.stopped || this.reading || this.timer !== undefined || (!this.wantEvent && !this.wantResync)) return;
    const now = performance.now();
    if (now >= this.nextReadAt) void this.readNow(now);
    else this.timer = setTimeout(this.windowEnded, this.nextReadAt - now);
  }

  private windowEnded = () => {
    this.timer = undefined;
    if (this.stopped || this.reading || (!this.wantEvent && !this.wantResync)) return;
    // The next window counts from when this read was due, not from when the timer ran: a key that changes about
    // once per window keeps its pace instead of falling a timer's lateness further behind each time (unless the
    // timer was a whole window late: then from now).
    const now = performance.now();
    void this.readNow(now - this.nextReadAt < this.windowMs ? this.nextReadAt : now);
  };

  private retry = () => {
    this.timer = undefined;
    this.schedule();
  };

  private async readNow(due: number): Promise<void> {
    const ifChanged = !this.wantEvent;
    this.wantEvent = this.wantResync = false;
    this.reading = true;
    this.nextReadAt = due + this.windowMs;
    const upToSeq = lastFollowerSeq;
    let result: R;
    try {
      result = await this.read();
    } catch (error) {
      this.reading = false;
      if (this.stopped) return;
      if (isDatabaseUnavailable(error)) {
        // A transient fault does not end the subscriptions (standard graphql-ws and SSE clients do not retry one that
        // ended): the feed reads again until the database answers, and sends the state then, as after a resync.
        this.wantResync = true;
        this.timer = setTimeout(this.retry, backoffDelay(++this.failures, RETRY_BACKOFF));
        return;
      }
      for (const follower of this.followers) if (follower.seq <= upToSeq) follower.fail(error);
      this.schedule();
      return;
    }
    this.reading = false;
    this.failures = 0;
    if (this.stopped) return;
    this.deliver(result, ifChanged, upToSeq);
    this.schedule();
  }
}

export interface LiveStateOptions<T> {
  /** The current state (read when subscriptions start, after events unless `fromEvent` says it, and after a resync). */
  read: () => Promise<T>;
  /**
   * The state an event announces, when events carry it: then no read follows an event, and every state is sent, in
   * order (no window).
   */
  fromEvent?: (detail: string) => T;
  /** Equal fingerprints mean no change; default: the JSON text. */
  fingerprint?: (state: T) => string;
  /** Whether a state found after a resync, or at the start of a `current` subscription, is worth emitting (default: any). */
  emitsAfterResync?: (state: T) => boolean;
  /**
   * A state after which nothing more will happen by itself: it is the last one emitted, then the subscription
   * completes. Found already at the start, it is emitted at once, so a late subscriber does not wait for ever.
   */
  isFinal?: (state: T) => boolean;
  /**
   * What else, beside topic and key, decides the state (the caller's system, say): subscribers share a feed only when
   * this is the same. The first subscriber's `read` serves them all, so it must depend on nothing else.
   */
  variant?: string;
}

const jsonFingerprint = (state: unknown) => JSON.stringify(state, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

/** A key's state: sent after every event (coalesced per window unless events carry it) and after a resync when it changed. */
class StateFeed<T> extends Feed<T, T> {
  private readonly fingerprint: (state: T) => string;
  private joiners: Follower<T>[] = [];
  private joining = false;

  constructor(registry: Map<string, Feed<unknown, unknown>>, id: string, topic: EventTopic, key: string, bus: EventBus, private readonly options: LiveStateOptions<T>) {
    super(registry, id, topic, key, bus, options.fromEvent ? 0 : STATE_WINDOW_MS);
    this.fingerprint = options.fingerprint ?? jsonFingerprint;
  }

  override get idle(): boolean {
    return super.idle && !this.joining;
  }

  follow(current: boolean): Follower<T> {
    const sendsStart = current ? (this.options.emitsAfterResync ?? (() => true)) : undefined;
    const follower = new Follower<T>(this.options.fromEvent ? 'every' : 'latest', this.options.isFinal, this.leave, false, sendsStart);
    this.followers.add(follower);
    this.joiners.push(follower);
    this.startJoinRead();
    return follower;
  }

  protected override signal(signal: BusSignal): void {
    if (signal.kind === 'event' && this.options.fromEvent) {
      const state = this.options.fromEvent(signal.detail);
      this.send({ value: state, fingerprint: this.fingerprint(state), ifChanged: false });
    } else {
      super.signal(signal);
    }
  }

  protected read(): Promise<T> {
    return this.options.read();
  }

  protected deliver: Deliver<T> = (state, ifChanged, upToSeq) => {
    if (ifChanged && this.options.emitsAfterResync && !this.options.emitsAfterResync(state)) return;
    this.send({ value: state, fingerprint: this.fingerprint(state), ifChanged }, upToSeq);
  };

  /**
   * The state subscribers start from, read once for all those that joined before the read began (at the end of the
   * event-loop turn they joined in, or after the read before): a read begun earlier could miss a change whose event
   * reached the feed before they joined.
   */
  private startJoinRead(): void {
    if (this.joining) return;
    this.joining = true;
    setImmediate(() => void this.joinRead());
  }

  private async joinRead(): Promise<void> {
    const batch = this.joiners;
    this.joiners = [];
    try {
      const state = await this.options.read();
      const fingerprint = this.fingerprint(state);
      for (const follower of batch) follower.begin(state, fingerprint);
    } catch (error) {
      for (const follower of batch) follower.fail(error);
    }
    this.joining = false;
    if (this.joiners.some((follower) => follower.open)) this.startJoinRead();
    else this.joiners = [];
  }
}

/**
 * The state of one key after every event, and after a resync when it changed while events could not arrive. `current`:
 * the first value is the state when the subscription started, read after it was listening, so that a view built from
 * it misses no change (a view that reads beside its subscription can miss one made between the two).
 */
export function liveState<T>(bus: EventBus, topic: EventTopic, key: string, options: LiveStateOptions<T>, { current = false }: { current?: boolean } = {}): AsyncIterableIterator<T> {
  const feeds = feedsOf(bus);
  const id = feedId(topic, key, options.variant);
  let feed = feeds.get(id) as StateFeed<T> | undefined;
  if (!feed) feed = new StateFeed<T>(feeds, id, topic, key, bus, options);
  return feed.follow(current);
}

export interface LiveChangesOptions<R> {
  /**
   * Reads what changed since the last call (the feed's first call: since the feed began). Called once per feed per
   * read, so it may keep its cursor in its closure; `makeReader` is called once per feed.
   */
  makeReader: () => () => Promise<readonly R[]>;
  /** When a change happened (ms since the epoch): a subscriber gets the changes from the moment it joined. */
  at: (change: R) => number;
}

/** Changes of one key, each sent once to every subscriber, in order. */
class ChangeFeed<R> extends Feed<R, readonly R[]> {
  private readonly reader: () => Promise<readonly R[]>;

  constructor(registry: Map<string, Feed<unknown, unknown>>, id: string, topic: EventTopic, key: string, bus: EventBus, private readonly options: LiveChangesOptions<R>) {
    super(registry, id, topic, key, bus, 0);
    this.reader = options.makeReader();
  }

  follow(): Follower<R> {
    const follower = new Follower<R>('every', undefined, this.leave, true);
    this.followers.add(follower);
    return follower;
  }

  protected read(): Promise<readonly R[]> {
    return this.reader();
  }

  protected deliver: Deliver<readonly R[]> = (changes, _ifChanged, upToSeq) => {
    for (const change of changes) {
      const at = this.options.at(change);
      this.send({ value: change, fingerprint: '', ifChanged: false }, upToSeq, (follower) => at >= follower.joinedAt);
    }
  };
}

/** Each change of one key, read once per signal for every subscriber, from the moment each subscriber joined. */
export function liveChanges<R>(bus: EventBus, topic: EventTopic, key: string, options: LiveChangesOptions<R>): AsyncIterableIterator<R> {
  const feeds = feedsOf(bus);
  const id = feedId(topic, key);
  let feed = feeds.get(id) as ChangeFeed<R> | undefined;
  if (!feed) feed = new ChangeFeed<R>(feeds, id, topic, key, bus, options);
  return feed.follow();
}

const registries = new WeakMap<EventBus, Map<string, Feed<unknown, unknown>>>();

function feedsOf(bus: EventBus): Map<string, Feed<unknown, unknown>> {
  let feeds = registries.get(bus);
  if (!feeds) registries.set(bus, (feeds = new Map()));
  return feeds;
}

const feedId = (topic: EventTopic, key: string, variant?: string) => JSON.stringify([topic, key, variant ?? null]);

/** One open subscription that follows a key, as tests wait on it. */
export interface LiveFollower {
  topic: EventTopic;
  key: string;
  /** Increases with every subscription the process opens. */
  seq: number;
  /** It has its starting state, waits for the next value, and its feed has sent everything signalled so far. */
  ready: boolean;
}

/** The open subscriptions of this process that follow a key (for tests, which wait until they are ready). */
export function liveFollowers(bus: EventBus): LiveFollower[] {
  const all: LiveFollower[] = [];
  for (const feed of feedsOf(bus).values()) {
    for (const follower of feed.followers) all.push({ topic: feed.topic, key: feed.key, seq: follower.seq, ready: follower.ready && feed.idle });
  }
  return all;
}

/**
 * The keys of a topic as they change, whatever the key, in any gateway process; null after a resync (anything may
 * have changed). Keys a subscriber has not taken yet wait once each, and a resync replaces them all: a list view
 * reads itself again on either, so what it is owed is bounded by what changed, not by how often.
 */
export function topicChanges(bus: EventBus, topic: EventTopic): AsyncIterableIterator<string | null> {
  let pending = new Set<string | null>();
  let wake: (() => void) | undefined;
  let closed = false;
  const poke = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  const stops = [
    bus.onTopic(topic, (key) => (pending.add(key), poke())),
    bus.onResync(() => ((pending = new Set([null])), poke())),
  ];
  const close = (): IteratorResult<string | null> => {
    if (!closed) {
      closed = true;
      for (const stop of stops) stop();
      pending.clear();
    }
    poke();
    return DONE;
  };
  return {
    async next() {
      for (;;) {
        if (closed) return DONE;
        const [first] = pending;
        if (first !== undefined) {
          pending.delete(first);
          return { value: first, done: false };
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    return: () => Promise.resolve(close()),
    throw: (error: unknown) => (close(), Promise.reject(error)),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
