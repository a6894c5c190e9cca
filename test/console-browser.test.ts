import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type Sink } from './channels/sink.js';
import { DATABASES } from './helpers/databases.js';
import { gql, rpc, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { bearer, makeKey } from './helpers/keys.js';
import { launchChromium, offlineContext, watchProblems } from './helpers/browser.js';
import { consoleOperations } from './helpers/console.js';

// The operator console (/console) in a real browser (headless Debian Chromium driven by playwright-core) against a
// gateway with AUTH=on and its workers running, on the embedded database and on PostgreSQL, with every request to
// another origin blocked and recorded: the console must work with no outside network, act through the gateway's
// API, follow changes made elsewhere without a reload, and offer only what the key's scopes allow. Screenshots of
// every page at 1280 and 375 px wide land in test-artifacts/console/ (git-ignored) for review.

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

describe.each(DATABASES)('the operator console in a browser, AUTH=on, on %s', (kind) => {
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    [browser, t, sink] = await Promise.all([launchChromium(), startTestGateway(kind, { AUTH: 'on' }), startSink()]);
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

  it('the failures page lists failed tasks of every queue, filters them in the address, retries and purges in bulk', async () => {
    const db = t.gateway.services.db;
    for (const queue of ['fa', 'fb']) {
      await api('mutation($n: String!) { createQueue(input: {name: $n}) { name } }', { n: queue });
      await api('mutation($n: String!) { pauseQueue(name: $n) { paused } }', { n: queue });
    }
    const failed = (queueName: string, name: string, minutesAgo: number, lastError: string) =>
      db.task.create({ data: { queueName, name, status: 'FAILED', target: { url: `${sink.url}/x`, method: 'POST' }, attempts: 20, lastError, finishTime: new Date(Date.now() - minutesAgo * 60_000) } });
    await failed('fa', 'invoice-1', 3, 'HTTP 503 from billing');
    await failed('fa', 'invoice-2', 1, 'connect timeout');
    await failed('fb', 'mail-1', 2, 'HTTP 503 from smtp relay');
    for (let i = 0; i < 30; i++) await failed('fb', `bulk-${String(i).padStart(2, '0')}`, 60 + i, 'HTTP 429 slow down');
    const c = await openConsole(operatorKey);
    try {
      await c.go('#/failures', 'Failures');
      const rows = () => c.page.locator('[data-task]');
      // Across queues, most recently ended first (other tests' failures among them).
      const ours = /^(fa\/|fb\/mail)/;
      await expect.poll(async () => (await rows().evaluateAll((els) => els.map((e) => e.getAttribute('data-task')))).filter((k) => ours.test(k!))).toEqual(['fa/invoice-2', 'fb/mail-1', 'fa/invoice-1']);
      const total = await db.task.count({ where: { status: 'FAILED' } });
      expect(await c.page.getByRole('navigation', { name: 'tasks pages' }).innerText()).toContain(`1–25 of ${total}`);

      await c.page.getByLabel('Error contains').fill('503');
      await expect.poll(() => rows().count()).toBe(2);
      expect(await c.page.evaluate(() => location.hash)).toBe('#/failures?error=503');
      // The address alone opens the same list.
      await c.page.reload();
      await c.page.getByRole('heading', { level: 1, name: 'Failures' }).waitFor();
      await expect.poll(() => rows().count()).toBe(2);
      expect(await c.page.getByLabel('Error contains').inputValue()).toBe('503');

      await c.page.getByLabel('Select fa/invoice-1').check();
      await c.page.getByLabel('Select fb/mail-1').check();
      await c.page.getByRole('button', { name: 'Retry selected (2)' }).click();
      const dialog = c.page.getByRole('dialog');
      expect(await dialog.innerText()).toContain('The 2 selected');
      await dialog.getByRole('button', { name: 'Retry 2' }).click();
      await expect.poll(() => c.page.getByRole('status').innerText()).toContain('2 tasks retried');
      const statusOf = async (queueName: string, name: string) => (await db.task.findUniqueOrThrow({ where: { queueName_name: { queueName, name } } })).status;
      expect([await statusOf('fa', 'invoice-1'), await statusOf('fb', 'mail-1'), await statusOf('fa', 'invoice-2')]).toEqual(['READY', 'READY', 'FAILED']);
      await expect.poll(() => rows().count()).toBe(0);

      // Everything matching across pages: the 30 of fb that hit the rate limit, purged in one confirmed action.
      await c.page.getByLabel('Error contains').fill('');
      await c.page.getByLabel('Queue').fill('fb');
      await c.page.getByLabel('Name contains').fill('BULK');
      await expect.poll(() => c.page.getByRole('navigation', { name: 'tasks pages' }).innerText()).toContain('of 30');
      await c.page.getByRole('button', { name: 'Purge all 30 matching' }).click();
      expect(await dialog.innerText()).toContain('cannot be undone');
      // Cancel is the safe default: nothing happens.
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect(await db.task.count({ where: { queueName: 'fb' } })).toBe(31);
      await c.page.getByRole('button', { name: 'Purge all 30 matching' }).click();
      await dialog.getByRole('button', { name: 'Purge 30' }).click();
      await expect.poll(() => c.page.getByRole('status').innerText()).toContain('30 tasks purged');
      expect(await db.task.count({ where: { queueName: 'fb' } })).toBe(1);
      await c.shot('failures');
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }
    // A reader finds the same failures and is offered nothing to do with them.
    const reader = await openConsole(readerKey);
    try {
      await reader.go('#/failures?queue=fa', 'Failures');
      await reader.page.locator('[data-task="fa/invoice-2"]').waitFor();
      expect(await reader.page.locator('main input[type="checkbox"]').count()).toBe(0);
      // Not even a closed dialog's buttons: paging alone.
      expect((await reader.page.locator('main button').allInnerTexts()).filter((b) => !/First|Previous|Next|Last|^Go$/.test(b))).toEqual([]);
    } finally {
      await reader.close();
    }
  });

  it('runs a task waiting on its schedule now, and resends a failed notification unit', async () => {
    await api('mutation { createQueue(input: {name: "soon"}) { name } }');
    await api('mutation($i: CreateTaskInput!) { createTask(input: $i) { status } }', { i: { queueName: 'soon', name: 'nightly-report', target: { url: `${sink.url}/ok` }, scheduleTime: new Date(Date.now() + 3_600_000).toISOString() } });
    const c = await openConsole(operatorKey);
    try {
      await c.go('#/queues/soon/tasks/nightly-report', 'Queue soon');
      await expect.poll(() => c.page.locator('.panel .status').first().innerText()).toBe('blocked');
      await c.page.locator('.panel').getByRole('button', { name: 'Run now' }).click();
      await expect.poll(() => c.page.locator('.panel .status').first().innerText(), { timeout: 15_000 }).toBe('succeeded');
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }

    // A general notification is delivered in-app; made FAILED as a channel's outage leaves a unit, it is sent again.
    const sent = await api('mutation($r: JSON!) { sendNotification(systemId: "portal", channel: GENERAL, request: $r) { incomingId } }', { r: { type: 'general', title: 'Outage', content: 'retry me' } });
    const db = t.gateway.services.db;
    const unit = await (async () => {
      for (;;) {
        const found = await db.notification.findFirst({ where: { incomingId: sent.sendNotification.incomingId } });
        if (found && found.status === 'DELIVERED') return found;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await db.notification.update({ where: { id: unit.id }, data: { status: 'FAILED', lastError: 'provider unreachable', attempts: 8 } });
    const sender = await openConsole(await makeKey(t, ['tasks:read', 'notifications:read', 'notifications:write']));
    try {
      const row = sender.page.locator(`[data-unit="${unit.id}"]`);
      // The page's error filter narrows the failed units too.
      await sender.go('#/failures?error=no-such-error', 'Failures');
      await sender.page.getByText('No failed notification unit.').waitFor();
      await sender.go('#/failures?error=UNREACHABLE', 'Failures');
      await expect.poll(() => row.innerText()).toContain('provider unreachable');
      await row.getByRole('button', { name: 'Resend' }).click();
      await expect.poll(async () => (await db.notification.findUniqueOrThrow({ where: { id: unit.id } })).status, { timeout: 15_000 }).toBe('DELIVERED');
      await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(0);
      expect(sender.problems).toEqual([]);
    } finally {
      await sender.close();
    }
  });

  it('creates a queue and edits its settings; creates a cron job and edits it; a refusal keeps what was typed', async () => {
    const c = await openConsole(operatorKey);
    try {
      await c.go('#/queues', 'Queues');
      await c.page.getByText('New queue').click();
      await c.page.getByLabel('Name', { exact: true }).fill('made-here');
      await c.page.getByLabel('Rate (tasks at once)').fill('4');
      await c.page.getByRole('button', { name: 'Create queue' }).click();
      await c.page.getByRole('heading', { level: 1, name: 'Queue made-here' }).waitFor();
      expect((await legacy('getQueue', { name: 'made-here' })).body.result).toMatchObject({ rate: 4 });

      await c.page.getByText('Settings', { exact: true }).click();
      await expect.poll(() => c.page.getByLabel('Rate (tasks at once, every process together)').inputValue()).toBe('4');
      await c.page.getByLabel('Description').fill('made in the console');
      await c.page.getByLabel('At most per process').fill('2');
      await c.page.getByLabel('Labels (comma-separated)').fill('ops, nightly');
      await c.page.getByLabel('Rate (tasks at once, every process together)').fill('100000');
      await c.page.getByRole('button', { name: 'Save settings' }).click();
      // Refused by the gateway (above QUEUE_MAX_RATE): its reason, the form as typed, nothing changed.
      await expect.poll(() => c.page.locator('.settings [role="alert"]').innerText()).toContain('rate');
      expect(await c.page.getByLabel('Description').inputValue()).toBe('made in the console');
      expect((await legacy('getQueue', { name: 'made-here' })).body.result).toMatchObject({ rate: 4, description: '' });
      await c.page.getByLabel('Rate (tasks at once, every process together)').fill('6');
      await c.page.getByRole('button', { name: 'Save settings' }).click();
      await expect.poll(async () => (await api('{ queue(name: "made-here") { rate description maxConcurrentDispatches labels } }')).queue).toEqual({
        rate: 6,
        description: 'made in the console',
        maxConcurrentDispatches: 2,
        labels: ['ops', 'nightly'],
      });
      // The head follows (its subscription), and the queue's chart has its scale and readout.
      await expect.poll(() => c.page.locator('.queue-head').innerText()).toContain('rate 6');
      await c.page.locator('.chart').waitFor();
      expect(await c.page.locator('.chart .x-axis span').count()).toBe(2);

      await c.go('#/jobs', 'Jobs');
      await c.page.getByText('New job').click();
      await c.page.getByLabel('Name', { exact: true }).fill('weekly');
      await c.page.getByLabel('Schedule (cron)').fill('not a cron');
      await c.page.getByLabel('Time zone').fill('Europe/Paris');
      await c.page.getByLabel('URL').fill(`${sink.url}/weekly`);
      await c.page.getByRole('button', { name: 'Create job' }).click();
      await expect.poll(() => c.page.locator('.settings [role="alert"]').innerText()).toContain('schedule');
      await c.page.getByLabel('Schedule (cron)').fill('0 6 * * 1');
      await c.page.getByRole('button', { name: 'Create job' }).click();
      await c.page.getByRole('heading', { level: 1, name: 'Job weekly' }).waitFor();
      expect((await api('{ job(name: "weekly") { schedule timeZone target { http { url } } } }')).job).toEqual({ schedule: '0 6 * * 1', timeZone: 'Europe/Paris', target: { http: { url: `${sink.url}/weekly` } } });

      await c.page.getByText('Edit job').click();
      await c.page.getByLabel('Schedule (cron)').fill('30 7 * * 1-5');
      await c.page.getByLabel('Target').selectOption('TASK');
      await c.page.getByLabel('Queue', { exact: true }).fill('made-here');
      await c.page.getByRole('button', { name: 'Save job' }).click();
      await expect.poll(async () => (await api('{ job(name: "weekly") { schedule target { kind task { queue } } } }')).job).toEqual({ schedule: '30 7 * * 1-5', target: { kind: 'TASK', task: { queue: 'made-here' } } });
      await expect.poll(() => c.page.locator('.facts').innerText()).toContain('30 7 * * 1-5');
      expect(c.problems).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('the home charts have a scale and time axis, and read out a minute\'s counts under the pointer', async () => {
    const c = await openConsole(operatorKey);
    try {
      const chart = c.page.locator('.chart').first();
      await chart.waitFor();
      await expect.poll(() => chart.locator('g[data-minute]').count()).toBe(60);
      // The pointer over a minute's column (moved there rather than hovered: the chart is read again as minutes pass).
      const minute = chart.locator('g[data-minute]').nth(30);
      const box = (await minute.locator('rect.hit').boundingBox())!;
      await c.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await expect.poll(() => chart.locator('.readout').innerText()).toMatch(/^\d{1,2}:\d{2}( [AP]M)?: \d+ succeeded, \d+ failed$/);
      const readout = await chart.locator('.readout').innerText();
      expect(await chart.locator('g.pointed title').textContent()).toBe(readout);
      expect(await chart.locator('.y-axis span').allInnerTexts()).toHaveLength(3);
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
      expect(reader.operations.filter((o) => /^(Pause|Resume|Open|Close|Change|Delete|Cancel|Restart|Run|Retry|Purge|Resend)/.test(o))).toEqual([]);
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
      ['failures', '#/failures', 'Failures'],
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
