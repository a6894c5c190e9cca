import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * Files that run with no other file beside them (after the others): each bounds a latency or a timing that a second
 * file busy on the same two cores could break, or changes what other files use. Every other file has its own
 * databases (a fresh PostgreSQL database, a copy of the embedded template), random ports and temporary directories,
 * and runs two at a time. A new file that measures time or touches shared state belongs here.
 */
/**
 * Files with an npm script of their own (`TEST_SUITE=<suite> vitest run`, SUITES below), left out of `npm test` to
 * keep it under five minutes; .ci/run calls each script before `npm test`. The container replay (two npm installs and a build, ~1.5 min): `npm run test:container`.
 * The database-fault suites (a frozen cluster of their own, connections cut under subscriptions, a full tmpfs under
 * the embedded database, PostgreSQL stopped under two gateways, a silent failover to a promoted replica, one queue's
 * targets hanging; ~2.5 min): `npm run test:faults`. The pages driven
 * in Debian's chromium (GraphiQL, the console and its sign-in, the example front end): `npm run test:browsers`. The
 * files that bound a latency or a timing (TIMING, below; ~2 min, one file at a time): `npm run test:timing`, on a host
 * with nothing else running, since a second busy file is what breaks such a bound.
 */
const CONTAINER = ['test/container.test.ts'];
const FAULTS = ['test/faults.test.ts', 'test/database-faults.test.ts', 'test/subscription-faults.test.ts', 'test/embedded-disk.test.ts', 'test/failover.test.ts', 'test/task-fairness.test.ts'];
const BROWSERS = ['test/graphiql-browser.test.ts', 'test/console-browser.test.ts', 'test/console-sign-in.test.ts', 'test/front-end-example.test.ts'];
const TIMING = [
  'test/event-bus-resync.test.ts', // a root added must be seen by the next verification, in a worker of a loaded pool
  'test/healthz-under-batch.test.ts', // /healthz answers within 100 ms while a batch of 100 calls runs
  'test/notifications-crash.test.ts', // the SIGKILL must land while 400 ms webhook calls are in flight
  'test/notifications-lease.test.ts', // 1 s leases renewed under a 2.5 s call: one late renewal sends twice
  'test/scheduler-cluster.test.ts', // two processes fire 21 jobs a second, each within 1 s, 10 +-1 in 10 s
  'test/scheduler-timing.test.ts', // resume's nextRunTime within 1.1 s of asking; a 1 s job timeout ends within 1.9 s
  'test/shutdown-deadlines.test.ts', // SIGTERM: not ready at once, exit within 3 s / 5 s
  'test/signatures-pool.test.ts', // the event loop stalls < 250 ms while signatures are verified
  'test/supervised-loop.test.ts', // stop() within 200 ms
  'test/tasks-cluster.test.ts', // two processes must overlap 120 ms calls to reach the rate; a 2 s lease after a SIGKILL
  'test/tasks-rate-change.test.ts', // four tasks RUNNING within 700 ms of a rate change
];
/** The suites with an npm script of their own (`TEST_SUITE=<name> vitest run`), each left out of every other run. */
const SUITES: Record<string, readonly string[]> = { container: CONTAINER, faults: FAULTS, browsers: BROWSERS, timing: TIMING };
const SUITE = process.env.TEST_SUITE;
if (SUITE !== undefined && !(SUITE in SUITES)) throw new Error(`TEST_SUITE=${SUITE}: the suites are ${Object.keys(SUITES).join(', ')}`);
const ONLY = SUITE === undefined ? undefined : SUITES[SUITE]!;
const OWN_SCRIPT = Object.values(SUITES).flat().filter((file) => !ONLY?.includes(file));

const ALONE = [
  ...TIMING,
  'test/embedded-disk.test.ts', // answers within 1-2 s on a full disk; SIGTERM and a failed database end the process in time
  'test/npm-scripts.test.ts', // rewrites src/generated/ and dist/ when their inputs changed (every file imports the first); generate.mjs < 2 s
  'test/node-version.test.ts', // compiles dist/ when src/ changed, which the files that run `npm start` use
  'test/npm-start-signals.test.ts', // npm start's prestart compiles dist/ when src/ changed
];
const SIDE_BY_SIDE = ONLY ? ONLY.filter((file) => !ALONE.includes(file)) : ['test/**/*.test.ts'];
const ALONE_HERE = ONLY ? ONLY.filter((file) => ALONE.includes(file)) : ALONE;

export default defineConfig({
  // graphql 16 ships CommonJS and an .mjs build without an exports map: Node gives dependencies the CommonJS one,
  // Vite would give our sources the .mjs one, and graphql refuses to mix two realms. One copy for all.
  resolve: { alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }] },
  test: {
    // Builds (or finds) the migrated embedded database that test databases are copied from.
    globalSetup: ['./test/global-setup.ts'],
    setupFiles: ['./test/setup-warnings.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/summary-reporter.ts'],
    projects: [
      ...(SIDE_BY_SIDE.length ? [{ extends: true as const, test: { name: 'side-by-side', include: SIDE_BY_SIDE, exclude: [...configDefaults.exclude, ...ALONE, ...OWN_SCRIPT], maxWorkers: 2 } }] : []),
      // One worker and the default group order: vitest runs these after the others, one file at a time.
      ...(ALONE_HERE.length ? [{ extends: true as const, test: { name: 'alone', include: ALONE_HERE, exclude: [...configDefaults.exclude, ...OWN_SCRIPT], maxWorkers: 1 } }] : []),
    ],
  },
});
