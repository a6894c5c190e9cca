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
import { startLeaseRenewal } from './lease-renewal.js';
import { loopLimits, superviseLoop } from '../kit/supervised-loop.js';
import { createSettleRetry, settleUntilLanded } from '../kit/settle-retry.js';
import { untilDeadline } from '../kit/deadline.js';

// The delivery worker, on a supervised loop: each round claims as many units as it has free slots (DELIVERY_BATCH at
// once; one SQL statement, SKIP LOCKED, leased) and starts them without waiting: deliver through the channel adapter
// -> settle (only while we still hold the lease; a failed settle is retried until it lands, the lease renewed
// meanwhile, so a message already sent is not sent again after an outage). Units that end free their places, and wake
// the loop once half of them are free; otherwise it sleeps until polled or nudged by a NOTIFY. The round itself only talks to the database, so
// its deadline (WORKER_ROUND_DEADLINE_MS) bounds that, never a slow peer.

/** Channels whose settings may be absent: the adapter's defaults suffice. */
const CONFIG_OPTIONAL = new Set(['webhook']);

export function createDeliveryWorker(services: AppServices, log: Logger): Worker {
  const { db, config, bus, loops } = services;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const logger = log.child({ worker: 'delivery', workerId });
  const limits = loopLimits(config);
  const retry = createSettleRetry({ backoff: limits.backoff, loops, log: logger });
  /**
   * Notifications being sent or settled now (at most DELIVERY_BATCH): their leases are renewed every third of
   * DELIVERY_LEASE_SECONDS until settled.
   */
  const sending = new Map<string, Promise<void>>();
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
    try {
      outcome = await outcomeOf(unit, settings);
    } catch (error) {
      outcome = { kind: 'retryable', reason: `delivery error: ${describeError(error)}` };
    }
    services.metrics.deliveries.inc({ channel: unit.channel, outcome: outcome.kind });
    const kept = await settleUntilLanded(`settle notification ${unit.id}`, () => settleOutcome(unit.id, outcome), retry);
    if (!kept) logger.warn({ notificationId: unit.id, outcome: outcome.kind }, 'lease lost before settling; another worker owns the notification');
    else if (outcome.kind !== 'delivered') logger.info({ notificationId: unit.id, channel: unit.channel, outcome }, 'delivery not done');
  }

  function settleOutcome(id: string, outcome: DeliveryOutcome): Promise<boolean> {
    switch (outcome.kind) {
      case 'delivered':
        return completeNotification(db, id, workerId, outcome.providerMessageId ?? null);
      case 'retryable':
        return retryNotification(db, id, workerId, outcome.reason, config.DELIVERY_RETRY_SCHEDULE, outcome.retryAfterMs ?? 0);
      case 'permanent':
        return failNotification(db, id, workerId, outcome.reason);
    }
  }

  function start(unit: ClaimedNotification, settings: Map<string, Promise<unknown>>): void {
    const run = runUnit(unit, settings)
      .catch((error: unknown) => logger.error({ err: error, notificationId: unit.id }, 'settling a notification failed; its lease will expire and it is retried'))
      .finally(() => {
        sending.delete(unit.id);
        // Claims come in batches: the loop is woken once half the places are free (a NOTIFY or the poll wakes it
        // before that), so a busy worker claims a few units per statement rather than one per delivery.
        if (config.DELIVERY_BATCH - sending.size >= Math.ceil(config.DELIVERY_BATCH / 2)) delivery.nudge();
      });
    sending.set(unit.id, run);
  }

  /** One round: claims what the free slots take and starts it; sleeps at once again while the claim filled them. */
  async function claimRound(signal: AbortSignal): Promise<number> {
    const free = config.DELIVERY_BATCH - sending.size;
    if (signal.aborted || free <= 0) return config.DELIVERY_POLL_MS;
    const claimed = await claimNotifications(db, workerId, free, config.DELIVERY_LEASE_SECONDS);
    // Claimed, so leased to this process: sent even if the round was abandoned meanwhile (else they wait out the lease).
    const settings = new Map<string, Promise<unknown>>();
    for (const unit of claimed) if (unit.status === 'SENDING') start(unit, settings);
    return claimed.length >= free && !signal.aborted ? 0 : config.DELIVERY_POLL_MS;
  }

  const delivery = loops.add(superviseLoop({ name: 'delivery', log: logger, ...limits, round: claimRound }));

  const renewal = startLeaseRenewal({
    leaseSeconds: config.DELIVERY_LEASE_SECONDS,
    held: () => [...sending.keys()],
    renew: (ids) => renewNotificationLeases(db, ids, workerId, config.DELIVERY_LEASE_SECONDS),
    logger,
    what: 'delivery',
    loops,
    limits,
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
      // In-flight deliveries finish (each is bounded by its channel timeout) until the deadline; settles still retrying
      // give up then. What has not settled by then keeps its lease, which expires: another process sends it again.
      const cancelGiveUp = retry.giveUpAt(deadline);
      await delivery.stop(deadline);
      const drained = async () => {
        while (sending.size) await Promise.all(sending.values());
      };
      if (!(await untilDeadline(drained(), deadline - Date.now()))) {
        logger.warn({ unsettled: sending.size }, 'notifications still sending or settling at the shutdown deadline; their leases expire and they are sent again elsewhere');
      }
      cancelGiveUp();
      await renewal.stop(deadline);
      await untilDeadline(closeChannels(), deadline - Date.now());
    },
    nudge: delivery.nudge,
  };
}
