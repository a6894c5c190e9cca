import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type Sink } from './channels/sink.js';
import { gql, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { launchChromium, offlineContext, watchProblems } from './helpers/browser.js';
import { consoleOperations } from './helpers/console.js';

// The operator console (/console) in a real browser (headless Debian Chromium driven by playwright-core) against a
// gateway with AUTH=on and its workers running, with every request to another origin blocked and recorded: the
// console must work with no outside network, act through the gateway's API, follow changes made elsewhere without a
// reload, and offer only what the key's scopes allow. Screenshots of every page at 1280 and 375 px wide land in
// test-artifacts/console/ (git-ignored) for review.

const ARTIFACTS = resolve(import.meta.dirname, '..', 'test-artifacts', 'console');
const WIDE = { width: 1280, height: 860 };
const NARROW = { width: 375, height: 760 };

let browser: Browser;
let t: TestGateway;
let sink: Sink;
/** The test's own key for setting things up and checking them over the API. */
let admin: Record<string, string>;
/** What an operator types into the console: reads and acts on queues, tasks and jobs, reads notifications. */
let operatorKey: string;
/** Reads every area, changes nothing. */
let readerKey: string;
/** Operation names by document id, from the console's manifest. */
let operationOf: Map<string, string>;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  [browser, t, sink] = await Promise.all([launchChromium(), startTestGateway('pglite', { AUTH: 'on' }), startSink()]);
  admin = bearer(await makeKey(t, ['admin:all']));
  operatorKey = await makeKey(t, ['queues:read', 'queues:write', 'tasks:read', 'tasks:write', 'scheduler:read', 'scheduler:write', 'notifications:read']);
  readerKey = await makeKey(t, ['queues:read', 'tasks:read', 'scheduler:read', 'notifications:read']);
  operationOf = consoleOperations();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await sink?.close();
});

const api = async (query: string, variables: Record<string, unknown> = {}) => {
  const answer = await gql(t.url, query, variables, admin);
  expect(answer.errors, query).toBeUndefined();
  return answer.data!;
};
const legacy = (method: string, params: Record<string, unknown>) => rpc(t.url, method, params, {}, admin);

interface ConsolePage {
  page: Page;
  /** Every URL the page and its sockets asked for. */
  requested: string[];
  /** Requests to another origin, blocked. */
  foreign: string[];
  /** Uncaught errors and Content-Security-Policy refusals. */
  problems: string[];
  /** What the console sent to /graphql: the name of each operation (by its document id). */
  operations: string[];
  /** Opens a page of the console (`#/queues`) and waits for its heading. */
  go(fragment: string, heading: string | RegExp): Promise<void>;
  shot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** A fresh browser context (no storage) on the console, signed in with `key`. */
async function openConsole(key: string, viewport = WIDE): Promise<ConsolePage> {
  const { context, foreign } = await offlineContext(browser, [t.url], { viewport });
  // Shorter than the test's own time-out, so that a wait that fails says what it waited for.
  context.setDefaultTimeout(10_000);
  const requested: string[] = [];
  const operations: string[] = [];
  context.on('request', (request) => {
    requested.push(request.url());
    // The console sends each operation by its id in its manifest (the gateway trusts it whenever it serves the console).
    if (request.url().endsWith('/graphql') && request.method() === 'POST') operations.push(operationOf.get(String(JSON.parse(request.postData() ?? '{}').documentId)) ?? '?');
  });
  const page = await context.newPage();
  const problems = watchProblems(page);
  page.on('websocket', (ws) => requested.push(ws.url()));
  await page.goto(`${t.url}/console`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Open the console' }).click();
  await page.getByRole('heading', { name: 'At a glance' }).waitFor();
  return {
    page,
    requested,
    foreign,
    problems,
    operations,
    async go(fragment, heading) {
      await page.evaluate((f) => (location.hash = f), fragment);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    },
    async shot(name) {
      await page.screenshot({ path: join(ARTIFACTS, `${name}-${viewport.width}.png`), fullPage: true });
    },
    close: () => context.close(),
  };
}

const queueRow = (page: Page, name: string) => page.locator(`[data-queue="${name}"]`);
const count = (scope: ReturnType<Page['locator']>, status: string) => scope.locator(`.count[data-status="${status}"] b`).first();

describe('the operator console in a browser, AUTH=on', () => {
  it('loads with nothing from outside the gateway, asks for a key and refuses a wrong one with the gateway\'s reason', async () => {
    const { context, foreign } = await offlineContext(browser, [t.url], { viewport: WIDE });
    const page = await context.newPage();
    const problems = watchProblems(page);
    try {
      await page.goto(`${t.url}/console`);
      await page.getByLabel('API key').fill('gw_000000000000_wrongwrongwrongwrongwrongwrongwrongwrongwro');
      await page.getByRole('button', { name: 'Open the console' }).click();
      await expect.poll(() => page.getByRole('alert').innerText()).toContain('The API key is unknown, malformed or revoked.');
      await page.screenshot({ path: join(ARTIFACTS, 'sign-in-1280.png') });
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
    await api('mutation { createQueue(input: {name: "first"}) { name } }');
    const c = await openConsole(operatorKey);
    try {
      // Every page, with its data and its live subscriptions.
      await c.go('#/queues', 'Queues');
      await queueRow(c.page, 'first').waitFor();
      await expect.poll(() => c.requested.filter((u) => u.startsWith('ws')).length).toBe(1);
      await c.go('#/jobs', 'Jobs');
      await c.go('#/notifications', 'Notifications');
      await c.go('#/', 'At a glance');
      // One socket carries every subscription.
      expect(c.requested.filter((u) => u.startsWith('ws'))).toEqual([`${t.url.replace('http', 'ws')}/graphql`]);
      expect(c.foreign).toEqual([]);
      expect(c.requested.filter((u) => new URL(u).host !== new URL(t.url).host)).toEqual([]);
      expect(c.problems).toEqual([]);
      // Everything it read went through the gateway's GraphQL API.
      expect(c.operations).toEqual(expect.arrayContaining(['Viewer', 'Activity', 'Queues', 'Jobs', 'Units']));
    } finally {
      await c.close();
    }
  });

  it('a queue paused in the console is paused over the legacy API; one paused over the legacy API shows paused without a reload', async () => {
    for (const name of ['ops-a', 'ops-b', 'ops-gone']) expect((await legacy('createQueue', { name, rate: 2 })).body.result.name).toBe(name);
    const c = await openConsole(operatorKey);
    try {
      await c.go('#/queues', 'Queues');
      await c.page.getByLabel('Name starts with').fill('ops-');
      await expect.poll(() => c.page.locator('[data-queue]').count()).toBe(3);
      // By keyboard: the button takes the focus and Enter presses it.
      const pause = queueRow(c.page, 'ops-a').getByRole('button', { name: 'Pause' });
      await pause.focus();
      await c.page.keyboard.press('Enter');
      await expect.poll(async () => (await legacy('getQueue', { name: 'ops-a' })).body.result.paused).toBe(true);
      await queueRow(c.page, 'ops-a').getByRole('button', { name: 'Resume' }).waitFor();

      expect((await legacy('pauseQueue', { name: 'ops-b' })).body.result.paused).toBe(true);
      await expect.poll(() => queueRow(c.page, 'ops-b').locator('.status-paused').count()).toBe(1);
      await queueRow(c.page, 'ops-b').getByRole('button', { name: 'Resume' }).waitFor();
      expect((await legacy('closeQueue', { name: 'ops-b' })).body.result.status).toBe('CLOSE');
      await expect.poll(() => queueRow(c.page, 'ops-b').locator('.state').innerText()).toContain('closed');

      // Open, close, a new rate: each a mutation, each seen over the legacy API.
      await queueRow(c.page, 'ops-b').getByRole('button', { name: 'Open' }).click();
      await expect.poll(async () => (await legacy('getQueue', { name: 'ops-b' })).body.result.status).toBe('OPEN');
      await queueRow(c.page, 'ops-a').getByLabel('Rate of ops-a').fill('7');
      await queueRow(c.page, 'ops-a').getByRole('button', { name: 'Set rate' }).click();
      await expect.poll(async () => (await legacy('getQueue', { name: 'ops-a' })).body.result.rate).toBe(7);

      // Delete asks first; Cancel keeps the queue, Delete removes it.
      await queueRow(c.page, 'ops-gone').getByRole('button', { name: 'Delete' }).click();
      const dialog = c.page.getByRole('dialog', { name: 'Delete queue ops-gone?' });
      await dialog.waitFor();
      await c.shot('queues-delete');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect((await legacy('getQueue', { name: 'ops-gone' })).body.result.name).toBe('ops-gone');
      await queueRow(c.page, 'ops-gone').getByRole('button', { name: 'Delete' }).click();
      await dialog.getByRole('button', { name: 'Delete queue' }).click();
      await expect.poll(async () => (await legacy('getQueue', { name: 'ops-gone' })).body.error?.data?.code).toBe('NOT_FOUND');
      await expect.poll(() => queueRow(c.page, 'ops-gone').count()).toBe(0);
      expect(c.operations).toEqual(expect.arrayContaining(['PauseQueue', 'OpenQueue', 'ChangeQueueRate', 'DeleteQueue']));
      expect(c.foreign).toEqual([]);
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("a task completing moves the queue's live counts, and its detail follows it", async () => {
    await api('mutation { createQueue(input: {name: "live", rate: 2}) { name } }');
    await api('mutation { pauseQueue(name: "live") { paused } }');
    const target = { url: `${sink.url}/work` };
    for (const name of ['t1', 't2']) await api('mutation($i: CreateTaskInput!) { createTask(input: $i) { status } }', { i: { queueName: 'live', name, target, payload: { n: name } } });
    const c = await openConsole(operatorKey);
    try {
      await c.go('#/queues/live/tasks/t1', 'Queue live');
      const head = c.page.locator('.queue-head');
      await expect.poll(() => count(head, 'ready').innerText()).toBe('2');
      await c.page.getByRole('heading', { name: /Task t1/ }).waitFor();
      await expect.poll(() => c.page.locator('.panel .status').first().innerText()).toBe('ready');
      await c.shot('task-ready');
      await api('mutation { resumeQueue(name: "live") { paused } }');
      await expect.poll(() => count(head, 'succeeded').innerText(), { timeout: 15_000 }).toBe('2');
      expect(await count(head, 'ready').innerText()).toBe('0');
      // The detail: the target, the attempts, the last answer and the statuses seen live, with no reload.
      await expect.poll(() => c.page.locator('.panel .status').first().innerText()).toBe('succeeded');
      const panel = await c.page.locator('.panel').innerText();
      expect(panel).toContain(`POST ${sink.url}/work`);
      expect(panel).toContain('HTTP 200');
      expect(panel).toMatch(/1 of 20/);
      await expect.poll(() => c.page.locator('.timeline li').allInnerTexts()).toEqual(expect.arrayContaining([expect.stringMatching(/^running/), expect.stringMatching(/^succeeded/)]));
      // Each attempt, and the payload it carried.
      await expect.poll(() => c.page.locator('.attempts [data-attempt="1"]').innerText()).toMatch(/succeeded[\s\S]*HTTP 200/);
      await c.page.locator('.payload summary').click();
      expect(await c.page.locator('.payload pre').innerText()).toContain('"n": "t1"');
      // The task list followed too.
      await expect.poll(() => c.page.locator('[data-task="t2"] .status').innerText()).toBe('succeeded');
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it("each queue's page starts from its own state; filters and page live in the address (reload, back, a shared link)", async () => {
    const db = t.gateway.services.db;
    await api('mutation { a: createQueue(input: {name: "st-a", rate: 2}) { name } b: createQueue(input: {name: "st-b", rate: 10}) { name } }');
    await api('mutation { a: pauseQueue(name: "st-a") { paused } b: pauseQueue(name: "st-b") { paused } }');
    const target = { url: `${sink.url}/never`, method: 'POST' };
    await db.task.createMany({ data: Array.from({ length: 60 }, (_, i) => ({ queueName: 'st-a', name: `r${String(i).padStart(2, '0')}`, status: 'READY' as const, target })) });
    await db.task.createMany({ data: Array.from({ length: 3 }, (_, i) => ({ queueName: 'st-b', name: `f${i}`, status: 'FAILED' as const, target, lastError: 'HTTP 500' })) });
    const pager = (page: Page) => page.getByRole('navigation', { name: 'tasks pages' }).locator('[aria-live]');
    const c = await openConsole(operatorKey);
    try {
      // Queue st-b, narrowed to its failed tasks, a new rate typed but not set.
      await c.go('#/queues/st-b', 'Queue st-b');
      await c.page.getByLabel('Status').selectOption('FAILED');
      await expect.poll(() => pager(c.page).innerText()).toBe('1–3 of 3');
      await c.page.getByLabel('Rate of st-b').fill('99');
      // Then st-a from the address bar: nothing of st-b's page carries over.
      await c.page.evaluate(() => (location.hash = '#/queues/st-a'));
      await c.page.getByRole('heading', { level: 1, name: 'Queue st-a' }).waitFor();
      await expect.poll(() => c.page.getByLabel('Rate of st-a').inputValue()).toBe('2');
      expect(await c.page.getByLabel('Status').inputValue()).toBe('');
      await expect.poll(() => pager(c.page).innerText()).toBe('1–25 of 60');
      // Back to st-b: its own address, with the filter it had.
      await c.page.goBack();
      await c.page.getByRole('heading', { level: 1, name: 'Queue st-b' }).waitFor();
      await expect.poll(() => pager(c.page).innerText()).toBe('1–3 of 3');
      expect(await c.page.getByLabel('Status').inputValue()).toBe('FAILED');
      expect(await c.page.getByLabel('Rate of st-b').inputValue()).toBe('10');

      // st-a at scale: the last page in one click, a page by its number, each page in the address.
      await c.go('#/queues/st-a', 'Queue st-a');
      await c.page.getByLabel('Status').selectOption('READY');
      await c.page.getByRole('button', { name: 'Next →' }).click();
      await expect.poll(() => pager(c.page).innerText()).toBe('26–50 of 60');
      await c.page.getByRole('button', { name: 'Last »' }).click();
      await expect.poll(() => pager(c.page).innerText()).toBe('51–60 of 60');
      await expect.poll(() => c.page.locator('[data-task]').count()).toBe(10);
      expect(await c.page.evaluate(() => location.hash)).toBe('#/queues/st-a?status=READY&page=3');
      await c.page.reload();
      await c.page.getByRole('heading', { level: 1, name: 'Queue st-a' }).waitFor();
      await expect.poll(() => pager(c.page).innerText()).toBe('51–60 of 60');
      await c.page.goBack();
      await expect.poll(() => pager(c.page).innerText()).toBe('26–50 of 60');
      await c.page.getByRole('spinbutton', { name: /^Page/ }).fill('1');
      await c.page.getByRole('button', { name: 'Go', exact: true }).click();
      await expect.poll(() => pager(c.page).innerText()).toBe('1–25 of 60');
      // A page past the end (the link is old, the rows are gone) shows the last one.
      await c.page.evaluate(() => (location.hash = '#/queues/st-a?status=READY&page=9'));
      await expect.poll(() => pager(c.page).innerText()).toBe('51–60 of 60');
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }
    // A shared link opens the same rows in another browser.
    const other = await openConsole(readerKey);
    try {
      await other.go('#/queues/st-a?status=READY&page=2', 'Queue st-a');
      await expect.poll(() => pager(other.page).innerText()).toBe('26–50 of 60');
      expect(await other.page.getByLabel('Status').inputValue()).toBe('READY');
      expect(await other.page.locator('[data-task]').first().innerText()).toMatch(/^r/);
    } finally {
      await other.close();
    }
  });

  it('an open task panel follows a restart made elsewhere; a queue created elsewhere appears on the open list', async () => {
    await api('mutation { createQueue(input: {name: "rs"}) { name } }');
    await api('mutation { pauseQueue(name: "rs") { paused } }');
    await t.gateway.services.db.task.create({ data: { queueName: 'rs', name: 'f', status: 'FAILED', target: { url: `${sink.url}/x`, method: 'POST' }, attempts: 20, lastError: 'HTTP 503' } });
    const c = await openConsole(operatorKey);
    try {
      await c.go('#/queues/rs/tasks/f', 'Queue rs');
      await expect.poll(() => c.page.locator('.panel .status').first().innerText()).toBe('failed');
      await api('mutation { restartTask(queueName: "rs", name: "f") { status } }');
      await expect.poll(() => c.page.locator('.panel .status').first().innerText()).toBe('ready');
      await api('mutation { cancelTask(queueName: "rs", name: "f") { status } }');
      await expect.poll(() => c.page.locator('.panel .status').first().innerText()).toBe('cancelled');
      await expect.poll(() => c.page.locator('.timeline li').allInnerTexts()).toEqual(expect.arrayContaining([expect.stringMatching(/^ready/), expect.stringMatching(/^cancelled/)]));
      await expect.poll(() => c.page.locator('[data-task="f"] .status').innerText()).toBe('cancelled');

      await c.go('#/queues?name=fresh-', 'Queues');
      await expect.poll(() => c.page.getByRole('navigation', { name: 'queues pages' }).innerText()).toContain('No queues');
      await api('mutation { createQueue(input: {name: "fresh-1"}) { name } }');
      await queueRow(c.page, 'fresh-1').waitFor();
      await legacy('deleteQueue', { name: 'fresh-1' });
      await expect.poll(() => queueRow(c.page, 'fresh-1').count()).toBe(0);
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('a job run from the console appears among its instances', async () => {
    await api('mutation($i: CreateJobInput!) { createJob(input: $i) { name } }', {
      i: { name: 'nightly', schedule: '0 2 * * *', timeZone: 'Europe/Berlin', description: 'the nightly report', target: { http: { url: `${sink.url}/report` } } },
    });
    const c = await openConsole(operatorKey);
    try {
      await c.go('#/jobs/nightly', 'Job nightly');
      expect(await c.page.locator('.facts').innerText()).toContain('Europe/Berlin');
      expect(await c.page.locator('[data-instance]').count()).toBe(0);
      await c.page.getByRole('button', { name: 'Run now' }).click();
      await expect.poll(() => c.page.locator('[data-instance]').count()).toBe(1);
      await expect.poll(() => c.page.locator('[data-instance] .status').innerText(), { timeout: 15_000 }).toBe('succeeded');
      expect(await c.page.locator('[data-instance]').innerText()).toContain('manual');
      const { jobInstances } = await api('{ jobInstances(filter: {jobName: "nightly"}) { nodes { trigger status } } }');
      expect(jobInstances.nodes).toEqual([{ trigger: 'MANUAL', status: 'SUCCEEDED' }]);
      // The list shows it among the job's last instances; pause from there.
      await c.go('#/jobs', 'Jobs');
      await expect.poll(() => c.page.locator('[data-job="nightly"] [data-instance-status]').count()).toBe(1);
      await c.page.locator('[data-job="nightly"]').getByRole('button', { name: 'Pause' }).click();
      await expect.poll(async () => (await api('{ job(name: "nightly") { status } }')).job.status).toBe('PAUSED');
      await c.page.locator('[data-job="nightly"]').getByRole('button', { name: 'Resume' }).click();
      await expect.poll(async () => (await api('{ job(name: "nightly") { status } }')).job.status).toBe('ENABLED');
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('a key with read scopes sees no action buttons; a refused action shows the gateway\'s reason', async () => {
    await api('mutation { createQueue(input: {name: "watch"}) { name } }');
    await api('mutation($i: CreateTaskInput!) { createTask(input: $i) { status } }', { i: { queueName: 'watch', name: 'later', target: { url: `${sink.url}/x` }, scheduleTime: '2099-01-01T00:00:00Z' } });
    const reader = await openConsole(readerKey);
    try {
      for (const [fragment, heading] of [['#/queues', 'Queues'], ['#/queues/watch/tasks/later', 'Queue watch'], ['#/jobs', 'Jobs'], ['#/jobs/nightly', 'Job nightly']] as const) {
        await reader.go(fragment, heading);
        await reader.page.locator('[data-queue], [data-task], [data-job], .facts').first().waitFor();
        await reader.page.locator('.panel, [data-queue], [data-job], .facts').first().waitFor();
        const buttons = await reader.page.locator('main button').allInnerTexts();
        // Not even hidden ones (a closed dialog's).
        // Paging stays; no action is offered.
        expect(buttons.filter((b) => !/First|Previous|Next|Last|^Go$/.test(b)), fragment).toEqual([]);
      }
      expect(await reader.page.locator('.actions').first().innerText()).toContain('read only');
      expect(reader.operations.filter((o) => /^(Pause|Resume|Open|Close|Change|Delete|Cancel|Restart|Run)/.test(o))).toEqual([]);
    } finally {
      await reader.close();
    }
    // A rate above QUEUE_MAX_RATE: the console sends it and shows the gateway's refusal in its own words.
    const refusal = await gql(t.url, 'mutation { changeQueueRate(name: "watch", rate: 5000) { rate } }', {}, admin);
    const reason = refusal.errors![0]!.message;
    expect(reason).toContain('rate');
    const operator = await openConsole(operatorKey);
    try {
      await operator.go('#/queues', 'Queues');
      await operator.page.getByLabel('Name starts with').fill('watch');
      await queueRow(operator.page, 'watch').getByLabel('Rate of watch').fill('5000');
      await queueRow(operator.page, 'watch').getByRole('button', { name: 'Set rate' }).click();
      await expect.poll(() => queueRow(operator.page, 'watch').getByRole('alert').innerText()).toContain(reason);
      await operator.shot('queues-refused');
      expect((await legacy('getQueue', { name: 'watch' })).body.result.rate).toBe(1);
    } finally {
      await operator.close();
    }
  });

  it('every page at 1280 and 375 px wide: screenshots kept, nothing wider than the screen (also at 320 px)', async () => {
    const pages: [string, string, string | RegExp][] = [
      ['home', '#/', 'At a glance'],
      ['queues', '#/queues', 'Queues'],
      ['queue', '#/queues/live/tasks/t1', 'Queue live'],
      ['jobs', '#/jobs', 'Jobs'],
      ['job', '#/jobs/nightly', 'Job nightly'],
      ['notifications', '#/notifications', 'Notifications'],
    ];
    // A delivery to show: a general notification is stored in-app, so it is delivered with no outside peer.
    await api('mutation($r: JSON!) { sendNotification(systemId: "portal", channel: GENERAL, request: $r) { incomingId } }', {
      r: { type: 'general', title: 'Maintenance', content: 'Tonight at 2' },
    });
    for (const viewport of [WIDE, NARROW, { width: 320, height: 700 }]) {
      const c = await openConsole(operatorKey, viewport);
      try {
        for (const [name, fragment, heading] of pages) {
          await c.go(fragment, heading);
          await c.page.waitForLoadState('networkidle');
          if (name === 'queues') await queueRow(c.page, 'live').waitFor();
          if (name === 'notifications') await c.page.locator('[data-request]').first().waitFor();
          if (viewport.width !== 320) await c.shot(name);
          const overflow = await c.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          expect(overflow, `${name} at ${viewport.width} px`).toBeLessThanOrEqual(0);
        }
        expect(c.foreign).toEqual([]);
        expect(c.problems).toEqual([]);
      } finally {
        await c.close();
      }
    }
  });
});
