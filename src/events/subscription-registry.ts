import type { ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import type { Gauge } from 'prom-client';
import type { Logger } from '../log.js';

// The open subscriptions of one process and their bounds, whatever the transport:
// - an API key holds at most MAX_SUBSCRIPTIONS_PER_KEY of them at once (graphql-ws subscriptions and SSE streams
//   together); one more is refused (TOO_MANY_SUBSCRIPTIONS) until one of them ends. Without a key (AUTH=off) there is
//   no cap, as there is no rate limit (docs/decisions.md).
// - what waits to be sent to one client connection (results not yet taken by the transport, and bytes the transport
//   holds that the operating system has not taken) stays under SUBSCRIPTION_MAX_BUFFERED_BYTES; a connection whose
//   client stops reading is dropped when it would pass it: a WebSocket is closed with 1013 and a reason, an SSE
//   response is destroyed. Results are read from the subscription as they come, so nothing queues unseen upstream.
// - one access line when a subscription starts and one when it ends, and the open count per transport (a gauge).
// The transports hand over their connection to one client as a SubscriberOutput (webSocketOutput, eventStreamOutput);
// the edges that do so (src/edge/ws.ts, src/edge/plugins/use-pipeline.ts) decide nothing; the pipeline follows each stream.

export type SubscriptionTransport = 'graphql-ws' | 'sse';

/** WebSocket close code of a dropped slow subscriber: 1013 "Try Again Later" (graphql-ws clients reconnect after it). */
export const SLOW_SUBSCRIBER_CLOSE_CODE = 1013;

/** What the registry needs from a transport's connection to one client. */
export interface SubscriberOutput {
  readonly transport: SubscriptionTransport;
  /** Bytes written for the client that the transport still holds (not yet taken by the operating system). */
  buffered(): number;
  /** Ends the connection because its client stopped reading (`reason` fits a WebSocket close frame). */
  drop(reason: string): void;
  /** `listener` runs once the connection is closed, by either side. */
  onClose(listener: () => void): void;
}

/** graphql-ws: every subscription of one WebSocket shares its output. */
export function webSocketOutput(socket: WebSocket): SubscriberOutput {
  return {
    transport: 'graphql-ws',
    buffered: () => socket.bufferedAmount,
    // The close frame waits behind what the client has not read; ws destroys the socket if it is not answered in time.
    drop: (reason) => socket.close(SLOW_SUBSCRIBER_CLOSE_CODE, reason),
    onClose: (listener) => void socket.once('close', listener),
  };
}

/** SSE: one response per subscription. A client that stopped reading would not read an end event either. */
export function eventStreamOutput(res: ServerResponse): SubscriberOutput {
  return {
    transport: 'sse',
    buffered: () => res.writableLength,
    drop: () => void res.destroy(),
    onClose: (listener) => void res.once('close', listener),
  };
}

/** The registry's handle on one client connection (kept by the transport hook, one per WebSocket or response). */
export interface SubscriberConnection {
  readonly output: SubscriberOutput;
}

/** Who opens a subscription, for the cap and the access lines. */
export interface SubscriptionStart {
  /** The API key's id; null without a key (AUTH=off): not capped. */
  keyId: string | null;
  requestId: string | undefined;
  operationName: string | null;
  /** The operation's root fields (its name may be absent). */
  fields: readonly string[];
}

export interface SubscriptionRefusal {
  refused: 'TOO_MANY_SUBSCRIPTIONS';
  message: string;
  maxSubscriptions: number;
}

/** An open subscription as the registry follows it. */
export interface FollowedSubscription<T> extends AsyncIterableIterator<T> {
  /** Ends it from outside with one last result for its client (its credential stopped being valid): the source is closed. */
  endWith(last: T): void;
}

export interface SubscriptionRegistry {
  connect(output: SubscriberOutput): SubscriberConnection;
  /** Follows `source` as one open subscription of `connection`, bounded; or refuses it (and closes `source`). */
  follow<T>(connection: SubscriberConnection, start: SubscriptionStart, source: AsyncIterable<T>): FollowedSubscription<T> | SubscriptionRefusal;
  /** Open subscriptions of one key, or of every key and none. */
  openCount(keyId?: string): number;
}

export interface SubscriptionRegistryOptions {
  /** MAX_SUBSCRIPTIONS_PER_KEY; 0 = no cap. */
  maxPerKey: number;
  /** SUBSCRIPTION_MAX_BUFFERED_BYTES, per client connection. */
  maxBufferedBytes: number;
  log: Logger;
  /** Open subscriptions by transport. */
  gauge: Gauge<'transport'>;
}

type EndReason = 'completed' | 'closed' | 'error' | 'too_slow' | 'unauthenticated';

const DONE: IteratorResult<never> = { value: undefined, done: true };

export function createSubscriptionRegistry(options: SubscriptionRegistryOptions): SubscriptionRegistry {
  const { maxPerKey, maxBufferedBytes, log, gauge } = options;
  const perKey = new Map<string, number>();
  let total = 0;
  for (const transport of ['graphql-ws', 'sse'] as const) gauge.set({ transport }, 0);

  class Connection implements SubscriberConnection {
    /** Bytes of results read from its subscriptions and not yet taken by the transport. */
    queued = 0;
    ended = false;
    /** Its open subscriptions (an array: one per SSE response, a few per WebSocket). */
    readonly open: Subscription<unknown>[] = [];
    constructor(readonly output: SubscriberOutput) {
      output.onClose(() => this.end('closed'));
    }
    /** After `bytes` more were queued: drops the connection when what waits for its client passes the bound. */
    queuedMore(bytes: number) {
      this.queued += bytes;
      const waiting = this.queued + this.output.buffered();
      if (waiting <= maxBufferedBytes || this.ended) return;
      this.end('too_slow');
      this.output.drop(`Subscriber too slow: more than ${maxBufferedBytes} bytes of output waited to be read`);
    }
    end(reason: EndReason) {
      this.ended = true;
      for (const subscription of this.open.slice()) subscription.close(reason);
    }
    forget(subscription: Subscription<unknown>) {
      const at = this.open.indexOf(subscription);
      if (at !== -1) this.open.splice(at, 1);
    }
  }

  /**
   * A subscription's results, read from its source as they come (one read pending at all times) and queued, bounded
   * by its connection, until the transport takes them.
   */
  class Subscription<T> implements FollowedSubscription<T> {
    private readonly queue: { value: T; bytes: number }[] = [];
    /** How the source ended, handed on after the queue. */
    private last: { error: unknown } | { done: true } | undefined;
    /** Ended from outside with a last result (endWith): the source's results are no longer taken. */
    private ending = false;
    /** Why it ends when that is not its source's doing. */
    private reason: EndReason | undefined;
    /** The transport's pending read. */
    private resolveNext: ((result: IteratorResult<T>) => void) | undefined;
    private rejectNext: ((error: unknown) => void) | undefined;
    private ended = false;
    private sent = 0;
    private readonly startedAt = performance.now();

    constructor(
      private readonly source: AsyncIterator<T>,
      private readonly connection: Connection,
      private readonly start: SubscriptionStart,
    ) {
      connection.open.push(this as Subscription<unknown>);
      void this.pump();
    }

    private async pump() {
      try {
        for (;;) {
          const result = await this.source.next();
          if (this.ended || this.ending) return;
          if (result.done) return this.settle({ done: true });
          this.push(result.value);
        }
      } catch (error) {
        if (!this.ended && !this.ending) this.settle({ error });
      }
    }

    private push(value: T) {
      const resolve = this.resolveNext;
      if (resolve) {
        this.resolveNext = this.rejectNext = undefined;
        this.sent++;
        return resolve({ value, done: false });
      }
      const bytes = sizeOf(value);
      this.queue.push({ value, bytes });
      this.connection.queuedMore(bytes);
    }

    private settle(last: { error: unknown } | { done: true }) {
      const resolve = this.resolveNext;
      const reject = this.rejectNext;
      if (!resolve || !reject) {
        this.last = last;
        return;
      }
      this.resolveNext = this.rejectNext = undefined;
      this.finish(this.reason ?? ('error' in last ? 'error' : 'completed'));
      if ('error' in last) reject(last.error);
      else resolve(DONE);
    }

    next(): Promise<IteratorResult<T>> {
      const item = this.queue.shift();
      if (item) {
        this.connection.queued -= item.bytes;
        this.sent++;
        return Promise.resolve({ value: item.value, done: false });
      }
      if (this.ended) return Promise.resolve(DONE);
      const last = this.last;
      if (last) {
        this.finish(this.reason ?? ('error' in last ? 'error' : 'completed'));
        return 'error' in last ? Promise.reject(last.error) : Promise.resolve(DONE);
      }
      return new Promise((resolve, reject) => {
        this.resolveNext = resolve;
        this.rejectNext = reject;
      });
    }

    return(): Promise<IteratorResult<T>> {
      this.close('closed');
      return Promise.resolve(DONE);
    }

    throw(error: unknown): Promise<IteratorResult<T>> {
      this.close('closed');
      return Promise.reject(error);
    }

    [Symbol.asyncIterator]() {
      return this;
    }

    endWith(last: T) {
      if (this.ended || this.ending) return;
      this.ending = true;
      const sourceEnded = this.last !== undefined;
      // What was queued is dropped: the client learns first that the stream ends, and why.
      for (const item of this.queue) this.connection.queued -= item.bytes;
      this.queue.length = 0;
      this.push(last);
      this.reason = 'unauthenticated';
      this.settle({ done: true });
      if (!sourceEnded) {
        void Promise.resolve()
          .then(() => this.source.return?.())
          .catch((error: unknown) => log.warn({ err: error, requestId: this.start.requestId }, 'a subscription failed to close'));
      }
    }

    /** Ends it from outside (the client, or its connection): the source is closed, a pending read answers done. */
    close(reason: EndReason) {
      if (this.ended) return;
      const sourceEnded = this.last !== undefined;
      this.finish(reason);
      if (!sourceEnded) {
        void Promise.resolve()
          .then(() => this.source.return?.())
          .catch((error: unknown) => log.warn({ err: error, requestId: this.start.requestId }, 'a subscription failed to close'));
      }
      const resolve = this.resolveNext;
      this.resolveNext = this.rejectNext = undefined;
      resolve?.(DONE);
    }

    private finish(reason: EndReason) {
      this.ended = true;
      for (const item of this.queue) this.connection.queued -= item.bytes;
      this.queue.length = 0;
      this.last = undefined;
      this.connection.forget(this as Subscription<unknown>);
      release(this.start.keyId, this.connection.output.transport);
      const ms = Math.round((performance.now() - this.startedAt) * 10) / 10;
      log.info({ ...accessFields(this.start, this.connection.output.transport), ms, events: this.sent, reason }, 'subscription ended');
    }
  }

  const release = (keyId: string | null, transport: SubscriptionTransport) => {
    total--;
    gauge.dec({ transport });
    if (keyId === null) return;
    const left = (perKey.get(keyId) ?? 1) - 1;
    if (left > 0) perKey.set(keyId, left);
    else perKey.delete(keyId);
  };

  return {
    connect: (output) => new Connection(output),
    follow<T>(handle: SubscriberConnection, start: SubscriptionStart, source: AsyncIterable<T>) {
      const connection = handle as Connection;
      const iterator = source[Symbol.asyncIterator]();
      const held = start.keyId === null ? 0 : (perKey.get(start.keyId) ?? 0);
      if (connection.ended || (maxPerKey > 0 && start.keyId !== null && held >= maxPerKey)) {
        void Promise.resolve()
          .then(() => iterator.return?.())
          .catch(() => undefined);
        if (connection.ended) return ended<T>();
        return {
          refused: 'TOO_MANY_SUBSCRIPTIONS',
          message: `This API key holds ${held} open subscriptions, the most one key may hold (MAX_SUBSCRIPTIONS_PER_KEY); end one to open another.`,
          maxSubscriptions: maxPerKey,
        };
      }
      if (start.keyId !== null) perKey.set(start.keyId, held + 1);
      total++;
      gauge.inc({ transport: connection.output.transport });
      log.info(accessFields(start, connection.output.transport), 'subscription started');
      return new Subscription(iterator, connection, start);
    },
    openCount: (keyId) => (keyId === undefined ? total : (perKey.get(keyId) ?? 0)),
  };
}

function accessFields(start: SubscriptionStart, transport: SubscriptionTransport) {
  return { requestId: start.requestId, transport, operationName: start.operationName, fields: start.fields, keyId: start.keyId };
}

/** Bytes of a result as the transports will write it (close enough: the envelope around it is left out). */
function sizeOf(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    // Not JSON (the transport will fail on it too): still counted, so that such results cannot queue without bound.
    return 1024;
  }
}

function ended<T>(): FollowedSubscription<T> {
  return {
    endWith: () => undefined,
    next: () => Promise.resolve(DONE),
    return: () => Promise.resolve(DONE),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
