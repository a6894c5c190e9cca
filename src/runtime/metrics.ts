import { Counter, Gauge, Histogram } from 'prom-client';
import { gatewayMetrics, metricsRegistry, type GatewayMetrics } from '../kit/metrics.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { countQueues } from '../db/sql/countQueues.js';
import { countTasks } from '../db/sql/countTasks.js';
import { pendingRetries } from '../db/sql/pendingRetries.js';
import type { Logger } from '../log.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { observeGroupCommits } from '../db/group-commit.js';
import type { LoopRegistry, LoopState } from '../kit/supervised-loop.js';
import { clockOffsetOf } from '../db/clock.js';

// Prometheus metrics of one gateway process: the registry and the counters the request path and the workers feed are
// src/kit/metrics.ts; here are the gauges read on each scrape, from the database (left empty while it cannot be
// reached: the scrape still answers, with the process metrics), the worker loops and the embedded disk.

const LOOP_STATES: readonly LoopState[] = ['idle', 'running', 'backing-off', 'stalled', 'stopped'];

/**
 * The metrics of one process: its registry, the gauges below (read on each scrape), then the counters the request
 * path and the workers feed (gatewayMetrics), registered in the order /metrics lists them.
 */
export function createMetrics(db: PrismaClient, log: Logger, options: { disk?: { freeBytes(): number | undefined; readonly minFreeBytes: number } | undefined; loops?: LoopRegistry } = {}): GatewayMetrics {
  const { disk, loops } = options;
  const registry = metricsRegistry();
  const registers = [registry];
  new Gauge({
    name: 'gateway_clock_offset_seconds',
    help: "This process's clock minus the database's, in seconds (measured at start and every minute); schedules, leases and backoffs follow the database's clock, and the process warns above 1 s either way.",
    registers,
    collect() {
      const offsetMs = clockOffsetOf(db);
      if (offsetMs === undefined) this.reset();
      else this.set(offsetMs / 1000);
    },
  });
  if (loops) {
    // What /readyz says of each worker loop, for alerts: a loop backing off or stalled is not doing its job.
    new Gauge({
      name: 'gateway_worker_loop_state',
      help: 'Each worker loop of this process: 1 for the state it is in (running, backing-off, stalled, ...), 0 for the others.',
      labelNames: ['loop', 'state'] as const,
      registers,
      collect() {
        this.reset();
        for (const loop of loops.statuses()) for (const state of LOOP_STATES) this.set({ loop: loop.name, state }, loop.state === state ? 1 : 0);
      },
    });
    const counted = new Map<string, number>();
    new Counter({
      name: 'gateway_worker_loop_stalls_total',
      help: 'Rounds of each worker loop abandoned at WORKER_ROUND_DEADLINE_MS (they waited on something that did not answer).',
      labelNames: ['loop'] as const,
      registers,
      collect() {
        for (const loop of loops.statuses()) {
          this.inc({ loop: loop.name }, loop.stalls - (counted.get(loop.name) ?? 0));
          counted.set(loop.name, loop.stalls);
        }
      },
    });
  }
  if (disk) {
    // The embedded database's disk, read by the guard (src/db/disk-guard.ts) at most a second ago: alert well above the floor.
    new Gauge({
      name: 'gateway_embedded_disk_free_bytes',
      help: 'Free bytes on the disk of DATA_DIR (the embedded database); writes are refused below gateway_embedded_disk_min_free_bytes.',
      registers,
      collect() {
        const free = disk.freeBytes();
        if (free === undefined) this.reset();
        else this.set(free);
      },
    });
    new Gauge({ name: 'gateway_embedded_disk_min_free_bytes', help: 'EMBEDDED_MIN_FREE_BYTES: the floor of free bytes below which writes are refused.', registers }).set(disk.minFreeBytes);
  }
  let taskQueryBroken = false;
  new Gauge({
    name: 'gateway_queues',
    help: 'Queues by status and paused flag.',
    labelNames: ['status', 'paused'] as const,
    registers,
    async collect() {
      this.reset();
      try {
        for (const row of await countQueues(db)) this.set({ status: row.status, paused: String(row.paused) }, row.n);
      } catch (error) {
        if (!isDatabaseUnavailable(error)) throw error;
      }
    },
  });
  const tasksGauge = new Gauge({
    name: 'gateway_tasks',
    help: 'Tasks by queue and status (RUNNING ones are running now; READY ones are the queue depth).',
    labelNames: ['queue', 'status'] as const,
    registers,
    async collect() {
      this.reset();
      if (taskQueryBroken) return;
      try {
        for (const row of await countTasks(db)) this.set({ queue: row.queue, status: row.status }, row.n);
      } catch (error) {
        if (isDatabaseUnavailable(error)) return;
        taskQueryBroken = true;
        log.warn({ err: error }, 'gateway_tasks: the Task table does not have the expected columns; gauge disabled');
      }
    },
  });
  void tasksGauge;
  // Notifications waiting out a retry wait, and when the first of them is tried again: an outage of a receiver shows
  // here as a count that grows while the next attempt keeps moving forward.
  let retries: Promise<Awaited<ReturnType<typeof pendingRetries>>> | undefined;
  const readRetries = () =>
    (retries ??= pendingRetries(db)
      .catch((error: unknown) => {
        if (isDatabaseUnavailable(error)) return [];
        throw error;
      })
      .finally(() => setImmediate(() => (retries = undefined))));
  new Gauge({
    name: 'gateway_notifications_waiting_retry',
    help: 'Notifications PENDING after a failed attempt, waiting for their next one, by channel.',
    labelNames: ['channel'] as const,
    registers,
    async collect() {
      this.reset();
      for (const row of await readRetries()) this.set({ channel: row.channel }, row.n);
    },
  });
  new Gauge({
    name: 'gateway_notifications_next_retry_timestamp_seconds',
    help: 'When the earliest next attempt of a notification waiting after a failed attempt is due (Unix time, seconds), by channel.',
    labelNames: ['channel'] as const,
    registers,
    async collect() {
      this.reset();
      for (const row of await readRetries()) this.set({ channel: row.channel }, row.nextAt);
    },
  });
  // Under load a group commit writes many items per statement; near one on average under load means each write pays
  // a statement (and its NOTIFY's commit) of its own.
  const groupCommitItems = new Histogram({
    name: 'gateway_group_commit_items',
    help: 'Items written by each group-commit statement, by writer (queue_create: queues created; notification_accept: notifications accepted).',
    labelNames: ['writer'] as const,
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers,
  });
  observeGroupCommits(db, (writer, items) => groupCommitItems.observe({ writer }, items));
  return gatewayMetrics(registry);
}
