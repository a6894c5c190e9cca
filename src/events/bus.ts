import type { Database, Listener } from '../db/client.js';
import { EVENTS_CHANNEL } from '../db/sql/notifyEvent.js';
import type { Logger } from '../log.js';

// Changes are announced by pg_notify inside the writing transaction (src/db/sql/notifyEvent.ts); every process
// LISTENs and fans the key out to its local subscribers, who re-read the current state. When the LISTEN connection
// is lost and comes back, what was announced in between is gone: the bus then tells everyone to resync (each
// subscription receives a `resync` signal, each resync handler runs), so nothing depends on a NOTIFY arriving.

export type EventTopic = 'queue' | 'task' | 'queueTasks' | 'job' | 'jobInstance' | 'notification' | 'trustedRoot';

/** What a subscription receives: an event about its key (with its detail, else the key), or a resync. */
export type BusSignal = { kind: 'event'; detail: string } | { kind: 'resync' };

export interface EventBus {
  /** Signals about `key` of `topic`, registered at once (no event after this call is missed). */
  subscribe(topic: EventTopic, key: string): AsyncIterableIterator<BusSignal>;
  /** Calls `handler` with each signal about `key` of `topic` (at once, in order) until the returned function is called. */
  watch(topic: EventTopic, key: string, handler: (signal: BusSignal) => void): () => void;
  /** Called for every event of a topic, whatever its key (workers use this to wake up). */
  onTopic(topic: EventTopic, handler: (key: string) => void): () => void;
  /** Called after the LISTEN connection came back: events may have been missed. */
  onResync(handler: () => void): () => void;
  /** False while the LISTEN connection is lost (readiness reports it). */
  readonly connected: boolean;
  close(): Promise<void>;
}

/** An unbounded queue of signals read as an async iterator; return() ends a pending read at once. */
function signalQueue(onClose: () => void): AsyncIterableIterator<BusSignal> & { push(signal: BusSignal): void } {
  const buffer: BusSignal[] = [];
  let waiting: ((result: IteratorResult<BusSignal>) => void) | undefined;
  let closed = false;
  const finish = (): IteratorResult<BusSignal> => {
    if (!closed) {
      closed = true;
      buffer.length = 0;
      onClose();
    }
    waiting?.({ value: undefined, done: true });
    waiting = undefined;
    return { value: undefined, done: true };
  };
  return {
    push(signal) {
      if (closed) return;
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ value: signal, done: false });
      } else {
        // Consecutive resyncs say nothing more than one.
        if (signal.kind === 'resync' && buffer.at(-1)?.kind === 'resync') return;
        buffer.push(signal);
      }
    },
    next() {
      if (buffer.length) return Promise.resolve({ value: buffer.shift()!, done: false });
      if (closed) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => (waiting = resolve));
    },
    return: () => Promise.resolve(finish()),
    throw: (error: unknown) => {
      finish();
      return Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

export async function startEventBus(db: Database, log: Logger): Promise<EventBus> {
  const subscriptions = new Map<string, Set<(signal: BusSignal) => void>>();
  const topicHandlers = new Map<string, Set<(key: string) => void>>();
  const resyncHandlers = new Set<() => void>();
  let lostAt = 0;

  const onPayload = (raw: string) => {
    let event: { topic?: unknown; key?: unknown; keys?: unknown; detail?: unknown };
    try {
      event = JSON.parse(raw) as typeof event;
    } catch {
      return;
    }
    if (typeof event.topic !== 'string') return;
    // One event names one key, or (batched by workers that change many rows at once, see notifyEventBatch) many.
    const keys = typeof event.key === 'string' ? [event.key] : Array.isArray(event.keys) ? event.keys.filter((k): k is string => typeof k === 'string') : [];
    const detail = typeof event.detail === 'string' ? event.detail : undefined;
    for (const key of keys) {
      for (const push of subscriptions.get(`${event.topic}:${key}`) ?? []) push({ kind: 'event', detail: detail ?? key });
      for (const handler of topicHandlers.get(event.topic) ?? []) handler(key);
    }
  };

  const listener: Listener = await db.listen(EVENTS_CHANNEL, {
    onPayload,
    onDisconnect(error) {
      lostAt = Date.now();
      log.warn({ err: error }, 'event listener lost its database connection; reconnecting with back-off');
    },
    onReconnect() {
      log.info({ downMs: Date.now() - lostAt }, 'event listener reconnected; resyncing subscriptions, caches and workers');
      for (const pushes of subscriptions.values()) for (const push of pushes) push({ kind: 'resync' });
      for (const handler of [...resyncHandlers]) {
        try {
          handler();
        } catch (error) {
          log.error({ err: error }, 'a resync handler failed');
        }
      }
    },
  });

  const register = <T>(map: Map<string, Set<T>>, key: string, value: T) => {
    const set = map.get(key) ?? new Set<T>();
    map.set(key, set);
    set.add(value);
    return () => {
      set.delete(value);
      if (set.size === 0 && map.get(key) === set) map.delete(key);
    };
  };

  return {
    subscribe(topic, key) {
      let unregister = () => {};
      const queue = signalQueue(() => unregister());
      unregister = register(subscriptions, `${topic}:${key}`, (signal: BusSignal) => queue.push(signal));
      return queue;
    },
    watch: (topic, key, handler) => register(subscriptions, `${topic}:${key}`, handler),
    onTopic: (topic, handler) => register(topicHandlers, topic, handler),
    onResync(handler) {
      resyncHandlers.add(handler);
      return () => resyncHandlers.delete(handler);
    },
    get connected() {
      return listener.connected;
    },
    close: () => listener.close(),
  };
}
