import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { closeChannels, deliver, delivered, describeError, hasAdapter, permanent, type DeliveryOutcome } from '../channels/index.js';
import type { EmailMessage } from '../channels/email.js';
import { claimNotifications, type ClaimedNotification } from '../db/sql/claimNotifications.js';
import { completeNotification } from '../db/sql/completeNotification.js';
import { failNotification } from '../db/sql/failNotification.js';
import { retryNotification } from '../db/sql/retryNotification.js';
import { renewNotificationLeases } from '../db/sql/renewNotificationLeases.js';
import type { AppServices } from '../graphql/context.js';
import type { Logger } from '../log.js';
import type { Worker } from './types.js';
import { createWakeUp } from './wake-up.js';
import { startLeaseRenewal, type LeaseRenewal } from './lease-renewal.js';

// The delivery worker: claim a batch (one SQL statement, SKIP LOCKED, leased) -> deliver each unit through its
// channel adapter -> settle (only while we still hold the lease) -> sleep until polled or nudged by a NOTIFY.

/** Channels whose settings may be absent: the adapter's defaults suffice. */
const CONFIG_OPTIONAL = new Set(['webhook']);
/** Failed iterations in a row (database unreachable, ...) after which the worker stops loudly. */
const MAX_FAILURES_IN_A_ROW = 30;

export function createDeliveryWorker(services: AppServices, log: Logger): Worker {
  const { db, config, bus } = services;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const logger = log.child({ worker: 'delivery', workerId });
  let stopping = false;
  let loop: Promise<void> | undefined;
  const wakeUp = createWakeUp();
  /** Notifications being sent now: their leases are renewed every third of DELIVERY_LEASE_SECONDS until settled. */
  const sending = new Set<string>();
  let renewal: LeaseRenewal | undefined;
  let unsubscribe: (() => void) | undefined;

  const nudge = () => wakeUp.wake();
  const sleep = (ms: number) => (stopping ? Promise.resolve() : wakeUp.sleep(ms));

  async function messageOf(unit: ClaimedNotification): Promise<unknown> {
    if (unit.channel !== 'email' || !unit.fileGroupId) return unit.payload;
    const files = await db.storedFile.findMany({ where: { groupId: unit.fileGroupId }, orderBy: { filename: 'asc' } });
    const letter: EmailMessage = {
      ...(unit.payload as EmailMessage),
      attachments: files.map((f) => ({ filename: f.filename, content: Buffer.from(f.data), contentType: f.contentType })),
    };
    return letter;
  }

  async function outcomeOf(unit: ClaimedNotification, settings: Map<string, Promise<unknown>>): Promise<DeliveryOutcome> {
    if (unit.channel === 'general') return delivered('stored in-app');
    if (!hasAdapter(unit.channel)) return permanent(`unknown channel ${unit.channel}`);
    const key = `${unit.systemId}\0${unit.channel}`;
    let stored = settings.get(key);
    if (!stored) {
      stored = db.systemChannel
        .findUnique({ where: { systemId_channel: { systemId: unit.systemId, channel: unit.channel } }, select: { config: true } })
        .then((row) => row?.config);
      settings.set(key, stored);
    }
    const raw = await stored;
    if (raw === undefined && !CONFIG_OPTIONAL.has(unit.channel)) {
      return permanent(`channel ${unit.channel} is not configured for system ${unit.systemId} (set it with the setSystemChannel mutation)`);
    }
    return deliver(unit.channel, (await messageOf(unit)) as never, raw ?? {});
  }

  async function runUnit(unit: ClaimedNotification, settings: Map<string, Promise<unknown>>): Promise<void> {
    let outcome: DeliveryOutcome;
    sending.add(unit.id);
    try {
      outcome = await outcomeOf(unit, settings);
    } catch (error) {
      outcome = { kind: 'retryable', reason: `delivery error: ${describeError(error)}` };
    } finally {
      sending.delete(unit.id);
    }
    let kept: boolean;
    switch (outcome.kind) {
      case 'delivered':
        kept = await completeNotification(db, unit.id, workerId, outcome.providerMessageId ?? null);
        break;
      case 'retryable':
        kept = await retryNotification(db, unit.id, workerId, outcome.reason, config.DELIVERY_BACKOFF_BASE_MS, outcome.retryAfterMs ?? 0);
        break;
      case 'permanent':
        kept = await failNotification(db, unit.id, workerId, outcome.reason);
        break;
    }
    if (!kept) logger.warn({ notificationId: unit.id, outcome: outcome.kind }, 'lease lost before settling; another worker owns the notification');
    else if (outcome.kind !== 'delivered') logger.info({ notificationId: unit.id, channel: unit.channel, outcome }, 'delivery not done');
  }

  async function runOnce(): Promise<number> {
    const claimed = await claimNotifications(db, workerId, config.DELIVERY_BATCH, config.DELIVERY_LEASE_SECONDS);
    const settings = new Map<string, Promise<unknown>>();
    const results = await Promise.allSettled(claimed.filter((u) => u.status === 'SENDING').map((u) => runUnit(u, settings)));
    for (const r of results) if (r.status === 'rejected') logger.error({ err: r.reason }, 'settling a notification failed; its lease will expire and it is retried');
    return claimed.length;
  }

  async function run(): Promise<void> {
    let failures = 0;
    while (!stopping) {
      wakeUp.reset();
      let claimed = 0;
      try {
        claimed = await runOnce();
        failures = 0;
      } catch (error) {
        failures += 1;
        logger.error({ err: error, failures }, 'delivery iteration failed');
        if (failures >= MAX_FAILURES_IN_A_ROW) {
          logger.fatal({ failures }, 'delivery worker stopped after repeated failures');
          return;
        }
      }
      if (claimed === 0 || failures > 0) await sleep(failures > 0 ? Math.min(config.DELIVERY_POLL_MS * 2 ** failures, 30_000) : config.DELIVERY_POLL_MS);
    }
  }

  return {
    name: 'delivery',
    start() {
      if (loop) return;
      unsubscribe = bus.onTopic('notification', nudge);
      renewal = startLeaseRenewal({
        leaseSeconds: config.DELIVERY_LEASE_SECONDS,
        held: () => [...sending],
        renew: (ids) => renewNotificationLeases(db, ids, workerId, config.DELIVERY_LEASE_SECONDS),
        logger,
        what: 'delivery',
      });
      loop = run();
    },
    async stop() {
      stopping = true;
      unsubscribe?.();
      wakeUp.wake();
      // In-flight deliveries finish (each is bounded by its channel timeout); an unfinished lease expires and is retried.
      await loop;
      renewal?.stop();
      await closeChannels();
    },
    nudge,
  };
}
