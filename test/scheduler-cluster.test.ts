import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { rpc } from './helpers/gateway.js';
import { startGatewayProcesses, type GatewayProcess } from './helpers/process.js';
import { sleep, startSink, type Sink } from './helpers/sink.js';

// Exactly once across processes: two gateway processes share one PostgreSQL database; a job firing every second
// for 10 seconds yields 10 (+-1) instances and never two for the same scheduled time.

describe('job scheduler across two gateway processes on postgres', () => {
  let db: FreshDatabase;
  let sink: Sink;
  let children: GatewayProcess[] = [];
  let urls: string[] = [];

  beforeAll(async () => {
    sink = await startSink();
    db = await freshDatabase('postgres');
    ({ children, urls } = await startGatewayProcesses(2, { ...db.env, LOG_LEVEL: 'info', GRAPHIQL: 'on' }));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await sink?.close();
    await db?.drop();
  }, 30_000);

  it('a job every second fires 10 (+-1) times in 10 s and never twice for one scheduled time', async () => {
    const [a, b] = urls.map((url) => ({ url })) as [{ url: string }, { url: string }];
    const created = await rpc(a.url, 'create', { name: 'every.second', schedule: '* * * * * *', target: { http: { url: `${sink.url}/tick` } } });
    expect(created.body.result?.status, JSON.stringify(created.body)).toBe('ENABLED');
    for (let i = 0; i < 20; i++) {
      await rpc(i % 2 ? a.url : b.url, 'create', { name: `crowd.${i}`, schedule: '*/1 * * * * *', target: { http: { url: `${sink.url}/crowd` } } });
    }
    const t0 = Math.ceil((Date.now() + 500) / 1000) * 1000;
    const t1 = t0 + 10_000;
    await sleep(t1 - Date.now() + 1500); // kept: the 10 s window is what is counted, then 1.5 s for its last calls
    await rpc(b.url, 'pause', { name: 'every.second' });

    const inWindow = (iso: string) => Date.parse(iso) >= t0 && Date.parse(iso) < t1;
    const found = await rpc(b.url, 'searchJobInstance', { jobName: 'every.second', trigger: 'SCHEDULE', from: new Date(t0).toISOString(), to: new Date(t1).toISOString(), pageSize: 500 });
    const times: string[] = found.body.result.map((i: { scheduledTime: string }) => i.scheduledTime);
    expect(found.body.rowsCount).toBeGreaterThanOrEqual(9);
    expect(found.body.rowsCount).toBeLessThanOrEqual(11);
    expect(new Set(times).size).toBe(times.length);
    expect(found.body.result.every((i: { status: string; misfire: string | null }) => i.status === 'SUCCEEDED' && i.misfire === null)).toBe(true);

    const hits = sink.hits.filter((h) => h.jobName === 'every.second' && inWindow(h.scheduleTime));
    expect(hits.length).toBeGreaterThanOrEqual(9);
    expect(hits.length).toBeLessThanOrEqual(11);
    expect(new Set(hits.map((h) => h.scheduleTime)).size).toBe(hits.length);
    for (const h of hits) expect(h.at - Date.parse(h.scheduleTime)).toBeLessThan(1000);

    // The crowd: 20 more jobs every second; every (job, scheduled time) reached the sink exactly once.
    const crowd = sink.hits.filter((h) => h.path === '/crowd' && inWindow(h.scheduleTime));
    const keys = crowd.map((h) => `${h.jobName}@${h.scheduleTime}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBeGreaterThanOrEqual(20 * 9);
    expect(keys.length).toBeLessThanOrEqual(20 * 11);
    // Both processes see the same job state.
    const byProcess = await Promise.all(urls.map((u) => rpc(u, 'get', { name: 'every.second' })));
    expect(byProcess.every((r) => r.body.result.status === 'PAUSED')).toBe(true);
  }, 60_000);
});
