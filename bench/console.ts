// npm run bench:console  (= npm run generate && tsx bench/console.ts)
//
// The operator console at the scale it must stay usable at: 1,000 queues, one of them with 100,000 tasks (a quarter
// each READY, SUCCEEDED, FAILED, BLOCKED; the ended ones spread over the last hour), and 100,000 more FAILED tasks
// spread over every queue (ended over the last day, each with one of a few errors) for the failures page, which
// must answer within the bound of the queue page: its slowest case's median. On a fresh PostgreSQL database
// (TEST_POSTGRES_URL or postgresql://postgres@127.0.0.1:5432/test, dropped at the end), the gateway in this process
// answers the console's own documents (console/src/gql) over HTTP by their ids, as the browser sends them; each is asked
// BENCH_ROUNDS (20) times after 3 untimed ones, and the median and the slowest are printed in milliseconds.
// Exits non-zero only on errors (a GraphQL error in an answer).
import pg from 'pg';
import { NO_WORKERS, startTestGateway } from '../test/helpers/gateway.js';
import * as docs from '../console/src/gql/graphql.js';

const FAILURES = 'Failures page (25 of every queue\'s FAILED tasks, newest first, with the total)';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const QUEUES = 1000;
const TASKS = 100_000;
const BIG = 'q-0001';
const FAILED = 100_000;

const t = await startTestGateway('postgres', { ...NO_WORKERS, LOG_LEVEL: 'silent' });
try {
  const client = new pg.Client({ connectionString: t.db.url! });
  await client.connect();
  const seeded = performance.now();
  await client.query(`INSERT INTO "Queue"(name) SELECT 'q-' || lpad(i::text, 4, '0') FROM generate_series(1, ${QUEUES}) i`);
  await client.query(`INSERT INTO "Task"(id, "queueName", name, status, target, "finishTime", "updateTime")
    SELECT gen_random_uuid(), '${BIG}', 'task-' || lpad(i::text, 6, '0'), (ARRAY['READY','SUCCEEDED','FAILED','BLOCKED'])[1 + i % 4]::"TaskStatus",
      '{"url":"http://127.0.0.1:9/x"}', CASE WHEN i % 4 IN (1, 2) THEN (now() AT TIME ZONE 'UTC') - (i % 3600) * interval '1 second' END, now() AT TIME ZONE 'UTC'
    FROM generate_series(1, ${TASKS}) i`);
  const errors = ['HTTP 503 from target', 'HTTP 500: internal error', 'connect timeout after 30 s', 'HTTP 429 slow down', 'ECONNREFUSED 10.0.0.7:443'];
  await client.query(`INSERT INTO "Task"(id, "queueName", name, status, target, attempts, "lastError", "finishTime", "updateTime")
    SELECT gen_random_uuid(), 'q-' || lpad((1 + i % ${QUEUES})::text, 4, '0'), 'failed-' || lpad(i::text, 6, '0'), 'FAILED', '{"url":"http://127.0.0.1:9/x"}', 20,
      (ARRAY['${errors.join("','")}'])[1 + i % ${errors.length}], (now() AT TIME ZONE 'UTC') - (i % 86400) * interval '1 second', now() AT TIME ZONE 'UTC'
    FROM generate_series(1, ${FAILED}) i`);
  await client.query('ANALYZE');
  await client.end();
  console.log(`seeded ${QUEUES} queues, ${TASKS} tasks in ${BIG} and ${FAILED} failed tasks across the queues in ${Math.round(performance.now() - seeded)} ms`);

  const ask = async (documentId: string, variables: Record<string, unknown>) => {
    const res = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ documentId, variables }) });
    const body = (await res.json()) as { errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(`${documentId}: ${body.errors[0]!.message}`);
  };
  const cases: [string, { __meta__?: Record<string, unknown> }, Record<string, unknown>][] = [
    ['Queues page (25 queues with task counts)', docs.QueuesDocument, { first: 25 }],
    ['Queues page, name prefix "q-09"', docs.QueuesDocument, { first: 25, filter: { namePrefix: 'q-09' } }],
    ['Queues page 40 (offset 975)', docs.QueuesDocument, { first: 25, after: Buffer.from('o:974').toString('base64url') }],
    ['Tasks of the 100k queue, first page', docs.QueueTasksDocument, { queueName: BIG, first: 25 }],
    ['Tasks of the 100k queue, status FAILED', docs.QueueTasksDocument, { queueName: BIG, first: 25, filter: { status: 'FAILED' } }],
    ['Tasks of the 100k queue, name contains "task-0999"', docs.QueueTasksDocument, { queueName: BIG, first: 25, filter: { nameContains: 'task-0999' } }],
    ['Tasks of the 100k queue, page 2000 (offset 49,975)', docs.QueueTasksDocument, { queueName: BIG, first: 25, after: Buffer.from('o:49974').toString('base64url') }],
    ['Home: activity of the last hour', docs.ActivityDocument, { minutes: 60, tasks: true, jobs: true, deliveries: true }],
    [FAILURES, docs.FoundTasksDocument, { first: 25, filter: { status: 'FAILED' } }],
    ['Failures page, error contains "timeout"', docs.FoundTasksDocument, { first: 25, filter: { status: 'FAILED', errorContains: 'timeout' } }],
    ['Failures page, name contains "0999"', docs.FoundTasksDocument, { first: 25, filter: { status: 'FAILED', nameContains: '0999' } }],
    ['Failures page, queue q-0500, last hour', docs.FoundTasksDocument, { first: 25, filter: { status: 'FAILED', queueName: 'q-0500', finishedAfter: new Date(Date.now() - 3_600_000).toISOString() } }],
    ['Failures page 2000 (offset 49,975)', docs.FoundTasksDocument, { first: 25, filter: { status: 'FAILED' }, after: Buffer.from('o:49974').toString('base64url') }],
    ['Queue page: throughput of the 100k queue', docs.QueueActivityDocument, { queueName: BIG }],
  ];
  const medians = new Map<string, number>();
  console.log('operation | median ms | slowest ms');
  for (const [name, document, variables] of cases) {
    const id = String(document.__meta__?.hash);
    for (let i = 0; i < 3; i++) await ask(id, variables);
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now();
      await ask(id, variables);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    medians.set(name, times[Math.floor(times.length / 2)]!);
    console.log(`${name} | ${times[Math.floor(times.length / 2)]!.toFixed(1)} | ${times.at(-1)!.toFixed(1)}`);
  }
  // The bound: the slowest median of the queue page's own reads (its tasks, filtered and paged deep).
  const bound = Math.max(...[...medians].filter(([name]) => name.startsWith('Tasks of the 100k queue')).map(([, ms]) => ms));
  const failures = [...medians].filter(([name]) => name.startsWith('Failures page'));
  const worst = Math.max(...failures.map(([, ms]) => ms));
  console.log(
    `goal: every failures page read (${FAILED.toLocaleString('en')} failed tasks across ${QUEUES} queues) within the queue page's bound (${bound.toFixed(1)} ms, its slowest median): slowest ${worst.toFixed(1)} ms, ${(worst / bound).toFixed(2)}x, ${worst <= bound ? 'met' : 'NOT met'}`,
  );
} finally {
  await t.close();
}
