import { createPubSub } from 'graphql-yoga';
import type { Database, Unlisten } from '../db/client.js';
import { EVENTS_CHANNEL } from '../db/sql/notifyEvent.js';

// Changes are announced by pg_notify inside the writing transaction (src/db/sql/notifyEvent.ts); every
// process LISTENs and fans the key out to its local subscribers, who re-read the current state.

export type EventTopic = 'queue' | 'task' | 'queueTasks' | 'job' | 'jobInstance' | 'notification' | 'trustedRoot';

export interface EventBus {
  /** Yields, per event of `topic` about `key`, the event's detail (task events carry the new status), else the key. */
  subscribe(topic: EventTopic, key: string): AsyncIterable<string>;
  /** Called for every event of a topic, whatever its key (workers use this to wake up). */
  onTopic(topic: EventTopic, handler: (key: string) => void): () => void;
  close(): Promise<void>;
}

export async function startEventBus(db: Database): Promise<EventBus> {
  const pubsub = createPubSub<Record<string, [string]>>();
  const topicHandlers = new Map<string, Set<(key: string) => void>>();
  const unlisten: Unlisten = await db.listen(EVENTS_CHANNEL, (raw) => {
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
      pubsub.publish(`${event.topic}:${key}`, detail ?? key);
      for (const handler of topicHandlers.get(event.topic) ?? []) handler(key);
    }
  });
  return {
    subscribe: (topic, key) => pubsub.subscribe(`${topic}:${key}`),
    onTopic(topic, handler) {
      const set = topicHandlers.get(topic) ?? new Set();
      topicHandlers.set(topic, set);
      set.add(handler);
      return () => set.delete(handler);
    },
    close: unlisten,
  };
}
