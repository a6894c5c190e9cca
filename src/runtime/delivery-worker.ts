import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { closeChannels, deliver, delivered, describeError, hasAdapter, permanent, type DeliveryOutcome } from '../channels/index.js';
import type { EmailMessage } from '../channels/email.js';
import { claimNotifications, type ClaimedNotification } from '../db/sql/claimNotifications.js';
import { completeNotification } from '../db/sql/completeNotification.js';
import { failNotification } from '../db/sql/failNotification.js';
import { retryNotification } from '../db/sql/retryNotification.js';
import { renewNotificationLeases } from '../db/sql/renewNotificationLeases.js';
import type { AppServices } from '../services.js';
import type { Logger } from '../log.js';
import type { Worker } from './types.js';
import { faultBackoff } from './backoff.js';
import { startLeaseRenewal } from './lease-renewal.js';
import { superviseLoop } from './supervised-loop.js';
import { createSettleRetry, settleUntilLanded } from './settle-retry.js';

// The delivery worker, on a supervised loop: claim a batch (one SQL statement, SKIP LOCKED, leased) -> deliver each
// unit through its channel adapter -> settle (only while we still hold the lease; a failed settle is retried until
// it lands, the lease renewed meanwhile, so a message already sent is not sent again after an outage) -> sleep until
// polled or nudged by a NOTIFY.

/** Channels whose settings may be absent: the adapter's defaults suffice. */
const CONFIG_OPTIONAL = new Set(['webhook']);

export function createDeliveryWorker(services: AppServices, log: Logger): Worker {
  const { db, config, bus, loops } = services;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const logger = log.child({ worker: 'delivery', workerId });
  const backoff = faultBackoff(config);
  const retry = createSettleRetry({ backoff, loops, log: logger });
  /** Notifications being sent or settled now: their leases are renewed every third of DELIVERY_LEASE_SECONDS until settled. */
  const sending = new Set<string>();
  let unsubscribe: (() => void) | undefined;
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
    return deliver(unit.channel, (await messageOf(unit)) as never, raw ?? {}, { outbound: services.outbound });
  }

  async function runUnit(unit: ClaimedNotification, settings: Map<string, Promise<unknown>>): Promise<void> {
    let outcome: DeliveryOutcome;
    sending.add(unit.id);
    try {
      outcome = await outcomeOf(unit, settings);
    } catch (error) {
      outcome = { kind: 'retryable', reason: `delivery error: ${describeError(error)}` };
    }
    let kept: boolean;
    try {
      kept = await settleUntilLanded(`settle notification ${unit.id}`, () => settleOutcome(unit.id, outcome), retry);
    } finally {
      sending.delete(unit.id);
    }
    if (!kept) logger.warn({ notificationId: unit.id, outcome: outcome.kind }, 'lease lost before settling; another worker owns the notification');
    else if (outcome.kind !== 'delivered') logger.info({ notificationId: unit.id, channel: unit.channel, outcome }, 'delivery not done');
  }

  function settleOutcome(id: string, outcome: DeliveryOutcome): Promise<boolean> {
    switch (outcome.kind) {
      case 'delivered':
        return completeNotification(db, id, workerId, outcome.providerMessageId ?? null);
      case 'retryable':
        return retryNotification(db, id, workerId, outcome.reason, config.DELIVERY_BACKOFF_BASE_MS, outcome.retryAfterMs ?? 0);
      case 'permanent':
        return failNotification(db, id, workerId, outcome.reason);
    }
  }

  async function runOnce(): Promise<number> {
    const claimed = await claimNotifications(db, workerId, config.DELIVERY_BATCH, config.DELIVERY_LEASE_SECONDS);
    const settings = new Map<string, Promise<unknown>>();
    const results = await Promise.allSettled(claimed.filter((u) => u.status === 'SENDING').map((u) => runUnit(u, settings)));
    for (const r of results) if (r.status === 'rejected') logger.error({ err: r.reason }, 'settling a notification failed; its lease will expire and it is retried');
    return claimed.length;
  }

  const delivery = loops.add(
    superviseLoop({
      name: 'delivery',
      log: logger,
      backoff,
      round: async (stopping) => ((stopping.aborted ? 0 : await runOnce()) > 0 ? 0 : config.DELIVERY_POLL_MS),
    }),
  );

  const renewal = startLeaseRenewal({
    leaseSeconds: config.DELIVERY_LEASE_SECONDS,
    held: () => [...sending],
    renew: (ids) => renewNotificationLeases(db, ids, workerId, config.DELIVERY_LEASE_SECONDS),
    logger,
    what: 'delivery',
    loops,
    backoff,
  });

  return {
    name: 'delivery',
    start() {
      unsubscribe = bus.onTopic('notification', delivery.nudge);
      delivery.start();
      renewal.start();
    },
    async stop(deadline) {
      unsubscribe?.();
      // In-flight deliveries finish (each is bounded by its channel timeout); settles still retrying give up at the
      // deadline, and their leases expire and are retried elsewhere.
      const cancelGiveUp = retry.giveUpAt(deadline);
      await delivery.stop();
      cancelGiveUp();
      await renewal.stop();
      await closeChannels();
    },
    nudge: delivery.nudge,
  };
}
