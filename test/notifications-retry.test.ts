import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { backoffAfter } from '../src/tasks/task-rules.js';
import { formatDuration, parseDuration } from '../src/kit/retry-schedule.js';
import { DATABASES } from './helpers/databases.js';
import { gql, post, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { freePort } from './helpers/ports.js';
import { eventually } from './helpers/sink.js';

// Retries that outlast real outages. A webhook receiver that refuses connections for two minutes, or for an hour,
// must get every notification accepted meanwhile once it is back, each once: the default schedule (Svix's: 5 s,
// 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, jittered by 20 %) spans about a day. Before, 5 attempts over ~15 s ended them
// FAILED. The outages are not waited out: each time every unit has failed and been given its next wait, the test
// checks that wait against the schedule, counts it as time the outage lasted, and moves the unit's next attempt to
// now, as the passing of that wait would (only the due time is moved; what the gateway decides is its own). The
// receiver comes back once the outage's length has passed for every unit. A system's own schedules (per channel, or
// for all its channels) are tested against a real, short outage.

const SVIX_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

/** A webhook receiver on a port of its own; absent (connections refused) until started. Counts what it received. */
function receiverOn(port: number) {
  const hits = new Map<string, number>();
  let server: Server | undefined;
  return {
    hits,
    async start() {
      server = createServer((req, res) => {
        hits.set(req.url ?? '/', (hits.get(req.url ?? '/') ?? 0) + 1);
        req.resume();
        req.on('end', () => res.end('ok'));
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    },
    async stop() {
      if (!server) return;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    },
  };
}

describe('retry schedules and backoffs', () => {
  it('DELIVERY_RETRY_SCHEDULE: Svix by default, durations from ms to days, bad ones refused; the variables it replaced stop the start', () => {
    expect(loadConfig({}).DELIVERY_RETRY_SCHEDULE).toEqual(SVIX_MS);
    expect(loadConfig({ DELIVERY_RETRY_SCHEDULE: '250ms, 1s,2m,1d' }).DELIVERY_RETRY_SCHEDULE).toEqual([250, 1000, 120_000, 86_400_000]);
    expect(loadConfig({ DELIVERY_RETRY_SCHEDULE: '' }).DELIVERY_RETRY_SCHEDULE).toEqual([]);
    expect(() => loadConfig({ DELIVERY_RETRY_SCHEDULE: '5s,soon' })).toThrow(/DELIVERY_RETRY_SCHEDULE: "soon" is not a wait of 1ms to 7d/);
    expect(() => loadConfig({ DELIVERY_RETRY_SCHEDULE: '8d' })).toThrow(/DELIVERY_RETRY_SCHEDULE: "8d" is not a wait/);
    expect(() => loadConfig({ DELIVERY_MAX_ATTEMPTS: '5' })).toThrow(/DELIVERY_MAX_ATTEMPTS: no longer read; use DELIVERY_RETRY_SCHEDULE/);
    expect(() => loadConfig({ DELIVERY_BACKOFF_BASE_MS: '1000' })).toThrow(/DELIVERY_BACKOFF_BASE_MS: no longer read; use DELIVERY_RETRY_SCHEDULE/);
    expect(SVIX_MS.map(formatDuration)).toEqual(['5s', '5m', '30m', '2h', '5h', '10h', '10h']);
    expect([parseDuration('1500ms'), parseDuration('2 h'), parseDuration('-1s')]).toEqual([1500, undefined, undefined]);
  });

  it("a task's backoff doubles from minBackoffMs, jittered by 20 %, never above maxBackoffMs; by default its retries span hours", () => {
    expect([1, 2, 3].map((n) => backoffAfter(n, 1000, 3_600_000, () => 0.5))).toEqual([1000, 2000, 4000]);
    expect(backoffAfter(3, 1000, 3_600_000, () => 0)).toBe(3200);
    expect(backoffAfter(3, 1000, 3_600_000, () => 1)).toBe(4800);
    expect(backoffAfter(20, 1000, 3_600_000, () => 1)).toBe(3_600_000);
    // 20 attempts (19 waits) with the defaults.
    const span = Array.from({ length: 19 }, (_, i) => backoffAfter(i + 1, 1000, 3_600_000, () => 0)).reduce((a, b) => a + b, 0);
    expect(span / 3_600_000).toBeGreaterThan(5);
  });
});

describe.each(DATABASES)('notification retries on %s', (kind) => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway(kind, { DELIVERY_POLL_MS: '100', SCHEDULER: 'off', TASK_DISPATCHER: 'off' });
  }, 60_000);
  afterAll(() => t?.close());

  const units = (systemId: string) => t.gateway.services.db.notification.findMany({ where: { systemId }, orderBy: { recipient: 'asc' } });
  const send = async (systemId: string, url: string) => {
    const accepted = await post(t.url, `/v1/systems/${systemId}/webhook`, JSON.stringify({ url, method: 'POST', body: { hello: systemId } }));
    expect(accepted.status).toBe(200);
  };

  /**
   * Runs an outage of `outageMs` (as the database's clock would see it pass) of a receiver of `count` notifications
   * of `systemId`; answers the units at the end and the waits each was given.
   */
  async function outage(systemId: string, outageMs: number, count: number) {
    const port = await freePort();
    const receiver = receiverOn(port);
    const paths = Array.from({ length: count }, (_, i) => `/${systemId}/${i}`);
    for (const path of paths) await send(systemId, `http://127.0.0.1:${port}${path}`);
    const waits = new Map<string, number[]>();
    const seen = new Map<string, number>();
    let up = false;
    try {
      for (;;) {
        // Each unit is delivered, or failed its latest attempt and was given its next wait.
        const rows = await eventually(async () => {
          const all = await units(systemId);
          return all.length === count && all.every((u) => u.status === 'DELIVERED' || (u.status === 'PENDING' && u.attempts > (seen.get(u.id) ?? 0))) && all;
        }, 20_000, 50);
        expect(rows.filter((u) => u.status === 'FAILED')).toEqual([]);
        if (rows.every((u) => u.status === 'DELIVERED')) return { rows, waits, receiver, paths };
        for (const unit of rows.filter((u) => u.status === 'PENDING')) {
          const wait = unit.availableAt.getTime() - unit.updateTime.getTime();
          const step = SVIX_MS[unit.attempts - 1]!;
          expect(wait, `wait after attempt ${unit.attempts}`).toBeGreaterThanOrEqual(step * 0.8 - 5);
          expect(wait, `wait after attempt ${unit.attempts}`).toBeLessThanOrEqual(step * 1.2 + 5);
          waits.set(unit.id, [...(waits.get(unit.id) ?? []), wait]);
          seen.set(unit.id, unit.attempts);
        }
        // The wait is visible: on the unit (GraphQL) and on /metrics.
        const first = rows.find((u) => u.status === 'PENDING')!;
        const read = await gql(t.url, '{ notifications(filter: { incomingId: $id }) { nodes { status nextAttemptAt attempts maxAttempts } } }'.replace('$id', JSON.stringify(first.incomingId)));
        expect(read.data!.notifications.nodes).toEqual([{ status: 'PENDING', nextAttemptAt: first.availableAt.toISOString(), attempts: first.attempts, maxAttempts: 8 }]);
        const metrics = await (await fetch(`${t.url}/metrics`)).text();
        const pending = rows.filter((u) => u.status === 'PENDING');
        expect(Number(/^gateway_notifications_waiting_retry\{channel="webhook"\} (\d+)$/m.exec(metrics)?.[1])).toBe(pending.length);
        const nextAt = Number(/^gateway_notifications_next_retry_timestamp_seconds\{channel="webhook"\} (\S+)$/m.exec(metrics)?.[1]);
        expect(Math.abs(nextAt * 1000 - Math.min(...pending.map((u) => u.availableAt.getTime())))).toBeLessThan(1000);

        // The outage is over once it has lasted its length for every unit.
        if (!up && rows.every((u) => (waits.get(u.id) ?? []).reduce((a, b) => a + b, 0) >= outageMs)) {
          await receiver.start();
          up = true;
        }
        // The waits pass: each unit is due now.
        await t.gateway.services.db.$executeRaw`UPDATE "Notification" SET "availableAt" = now() AT TIME ZONE 'UTC' WHERE "systemId" = ${systemId} AND status = 'PENDING'`;
      }
    } finally {
      await receiver.stop();
    }
  }

  it('a two-minute outage of a webhook receiver loses nothing: each notification is delivered once, on its third attempt', async () => {
    const { rows, receiver, paths } = await outage(`two-minutes-${kind}`, 120_000, 10);
    expect(rows.map((u) => [u.status, u.attempts, u.maxAttempts])).toEqual(rows.map(() => ['DELIVERED', 3, 8]));
    for (const path of paths) expect(receiver.hits.get(path)).toBe(1);
  }, 60_000);

  it('a one-hour outage loses nothing: delivered once, on the fifth attempt (after waits of about 5 s, 5 min, 30 min and 2 h)', async () => {
    const { rows, waits, receiver, paths } = await outage(`one-hour-${kind}`, 3_600_000, 10);
    expect(rows.map((u) => [u.status, u.attempts])).toEqual(rows.map(() => ['DELIVERED', 5]));
    for (const unit of rows) expect(waits.get(unit.id)).toHaveLength(4);
    for (const path of paths) expect(receiver.hits.get(path)).toBe(1);
  }, 60_000);

  it("a system's own schedule, per channel or for all its channels, rides out a real outage; an exhausted one ends FAILED", async () => {
    const setSchedule = (systemId: string, channel: string | null, schedule: string[] | null) =>
      gql(t.url, 'mutation($s: String!, $c: NotificationChannel, $w: [String!]) { setRetrySchedule(systemId: $s, channel: $c, schedule: $w) { systemId channel schedule } }', { s: systemId, c: channel, w: schedule });
    expect((await setSchedule('quick', 'WEBHOOK', Array(10).fill('200ms'))).data).toEqual({ setRetrySchedule: { systemId: 'quick', channel: 'WEBHOOK', schedule: Array(10).fill('200ms') } });
    expect((await setSchedule('quick', null, ['1h'])).data).toEqual({ setRetrySchedule: { systemId: 'quick', channel: null, schedule: ['1h'] } });
    expect((await setSchedule('brief', null, ['100ms', '100ms'])).data!.setRetrySchedule.schedule).toEqual(['100ms', '100ms']);
    const bad = await setSchedule('quick', 'SMS', ['5s', 'later', '9d']);
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', fields: [{ field: 'schedule.1' }, { field: 'schedule.2' }] });
    const listed = await gql(t.url, '{ retrySchedules(systemId: "quick") { channel schedule } }');
    expect(listed.data!.retrySchedules).toEqual([{ channel: null, schedule: ['1h'] }, { channel: 'WEBHOOK', schedule: Array(10).fill('200ms') }]);

    // The receiver of "quick" is away for a second and a half: its webhook schedule (200 ms, ten times) rides it out.
    const port = await freePort();
    const receiver = receiverOn(port);
    for (let i = 0; i < 3; i++) await send('quick', `http://127.0.0.1:${port}/quick/${i}`);
    await send('brief', `http://127.0.0.1:${port}/brief`);
    await send('plain', `http://127.0.0.1:${port}/plain`);
    await new Promise((r) => setTimeout(r, 1500)); // the outage's length
    await receiver.start();
    try {
      const quick = await eventually(async () => {
        const all = await units('quick');
        return all.every((u) => u.status === 'DELIVERED') && all;
      }, 15_000);
      expect(quick.map((u) => u.maxAttempts)).toEqual([11, 11, 11]);
      for (let i = 0; i < 3; i++) expect(receiver.hits.get(`/quick/${i}`)).toBe(1);
      // "brief" (100 ms twice, for all its channels) gave up within the outage: three attempts, then FAILED.
      const [brief] = await units('brief');
      expect(brief).toMatchObject({ status: 'FAILED', attempts: 3, maxAttempts: 3 });
      expect(brief!.lastError).toMatch(/^gave up after 3 attempts: network error/);
      expect(receiver.hits.get('/brief')).toBeUndefined();
      // A system without a schedule of its own follows the default: 8 attempts, the next one 5 s after the first.
      const [plain] = await units('plain');
      expect(plain).toMatchObject({ status: 'PENDING', attempts: 1, maxAttempts: 8 });
    } finally {
      await receiver.stop();
    }

    // Removed, the channel follows the system's schedule for all channels again.
    expect((await setSchedule('quick', 'WEBHOOK', null)).data).toEqual({ setRetrySchedule: null });
    expect((await gql(t.url, '{ retrySchedules(systemId: "quick") { channel } }')).data!.retrySchedules).toEqual([{ channel: null }]);
    await send('quick', `http://127.0.0.1:${await freePort()}/nobody`);
    await eventually(async () => (await units('quick')).some((u) => u.recipient.endsWith('/nobody') && u.maxAttempts === 2), 5000);
  }, 60_000);
});
