import type { DatabaseKind } from './databases.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { startSink, type Sink } from './sink.js';

// The job scheduler's test gateway, shared by test/scheduler.test.ts (run beside other files) and
// test/scheduler-timing.test.ts (run alone: it bounds when a job fires and when an attempt times out).

/** A schedule that does not come round during a run: such a job fires when a test runs it. */
export const YEARLY = '0 0 1 1 *';

export interface SchedulerGateway {
  t: TestGateway;
  url: string;
  /** The peer every job target points at (test/helpers/sink.ts). */
  sink: Sink;
  /** An HTTP target on the sink. */
  http(path?: string): { http: { url: string } };
  close(): Promise<void>;
}

/** A sink and a gateway whose scheduler fails lost instances soon (a short reap interval). */
export async function startSchedulerGateway(kind: DatabaseKind): Promise<SchedulerGateway> {
  const sink = await startSink();
  const t = await startTestGateway(kind, { SCHEDULER_MISFIRE_THRESHOLD_MS: '5000', SCHEDULER_REAP_INTERVAL_MS: '300' });
  return {
    t,
    url: t.url,
    sink,
    http: (path = '/ok') => ({ http: { url: `${sink.url}${path}` } }),
    async close() {
      await t.close();
      await sink.close();
    },
  };
}
