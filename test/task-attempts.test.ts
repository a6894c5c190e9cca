import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/databases.js';
import { gql, rpc } from './helpers/gateway.js';
import { eventually } from './helpers/sink.js';
import { startTasksGateway, taskCalls, type TasksGateway } from './helpers/tasks-gateway.js';
import { ATTEMPT_ANSWER_LIMIT, ATTEMPT_HISTORY } from '../src/db/task-attempts.js';

// Every ended attempt of a task is kept (its last ATTEMPT_HISTORY), written by the UPDATE that settles it: start,
// duration, HTTP status, error and the start of the answer, in GraphQL as Task.history with the next attempt's time;
// a lease that expired is kept as LOST. The legacy answers do not change. Real dispatcher, real HTTP sink, both
// databases.

const HISTORY = 'history { attempt startTime finishTime durationMs outcome statusCode error answer }';

describe.each(DATABASES)('task attempts on %s', (kind) => {
  let g: TasksGateway;
  const { target, create, get } = taskCalls(() => g);
  const task = async (queueName: string, name: string) => {
    const answer = await gql(g.url, `query($q: String!, $n: String!) { task(queueName: $q, name: $n) { status attempts nextAttemptAt ${HISTORY} } }`, { q: queueName, n: name });
    expect(answer.errors).toBeUndefined();
    return answer.data!.task as { status: string; attempts: number; nextAttemptAt: string | null; history: Record<string, any>[] };
  };

  beforeAll(async () => {
    g = await startTasksGateway(kind);
  }, 60_000);
  afterAll(() => g?.close());

  it('each attempt is kept, newest first, with its status, error, answer and duration; a retrying task says when it runs next', async () => {
    await rpc(g.url, 'createQueue', { name: 'hist' });
    await create('hist', 'flaky', { target: target('/x?failUntil=3'), maxAttempts: 5, minBackoffMs: 100, maxBackoffMs: 150 });
    const done = await eventually(async () => {
      const now = await task('hist', 'flaky');
      return now.status === 'SUCCEEDED' && now;
    });
    expect(done.history.map((a) => [a.attempt, a.outcome, a.statusCode])).toEqual([
      [3, 'SUCCEEDED', 200],
      [2, 'RETRY', 500],
      [1, 'RETRY', 500],
    ]);
    expect(done.history[0]).toMatchObject({ error: null, answer: 'done flaky' });
    expect(done.history[1]).toMatchObject({ error: expect.stringContaining('HTTP 500'), answer: 'broken' });
    for (const a of done.history) {
      expect(Date.parse(a.finishTime) - Date.parse(a.startTime)).toBe(a.durationMs);
      expect(a.durationMs).toBeGreaterThanOrEqual(0);
    }
    // Attempts in the order they ran: each started after the one before ended.
    expect(Date.parse(done.history[0]!.startTime)).toBeGreaterThanOrEqual(Date.parse(done.history[1]!.finishTime));
    expect(done.nextAttemptAt).toBeNull();

    // A task waiting out its backoff says when its next attempt is due.
    await create('hist', 'slow-retry', { target: target('/fail'), maxAttempts: 3, minBackoffMs: 60_000, maxBackoffMs: 60_000 });
    const waiting = await eventually(async () => {
      const now = await task('hist', 'slow-retry');
      return now.history.length === 1 && now.status === 'READY' && now;
    });
    expect(Date.parse(waiting.nextAttemptAt!) - Date.parse(waiting.history[0]!.finishTime)).toBeGreaterThanOrEqual(48_000);
    expect(waiting.history[0]).toMatchObject({ attempt: 1, outcome: 'RETRY', statusCode: 500 });

    // The legacy answer is the one it always was.
    expect(Object.keys(await get('hist', 'flaky')).sort()).toEqual(
      ['attempts', 'createTime', 'dependsOn', 'description', 'finishTime', 'id', 'lastError', 'maxAttempts', 'maxBackoffMs', 'minBackoffMs', 'name', 'payload', 'queueName', 'result', 'scheduleTime', 'startTime', 'status', 'target', 'updateTime'].sort(),
    );
  }, 30_000);

  it(`keeps the last ${ATTEMPT_HISTORY} attempts across restarts, an answer cut to ${ATTEMPT_ANSWER_LIMIT} characters, a lost lease as LOST`, async () => {
    const db = g.t.gateway.services.db;
    await rpc(g.url, 'createQueue', { name: 'trim' });
    await rpc(g.url, 'pauseQueue', { name: 'trim' });
    await create('trim', 'long', { target: target('/fail'), maxAttempts: 1 });
    const { id } = await db.task.findFirstOrThrow({ where: { queueName: 'trim', name: 'long' } });
    // A history longer than is kept (as a build that kept more would have left it), newest first as stored.
    const old = new Date(Date.now() - 3_600_000).toISOString().slice(0, -1);
    const stored = Array.from({ length: ATTEMPT_HISTORY + 3 }, (_, i) => ({ attempt: ATTEMPT_HISTORY + 3 - i, startTime: old, finishTime: old, outcome: 'RETRY', statusCode: 500, error: `old ${ATTEMPT_HISTORY + 3 - i}`, answer: null }));
    await db.task.update({ where: { id }, data: { history: stored } });
    await rpc(g.url, 'resumeQueue', { name: 'trim' });
    const failed = await eventually(async () => {
      const now = await task('trim', 'long');
      return now.status === 'FAILED' && now;
    });
    expect(failed.history).toHaveLength(ATTEMPT_HISTORY);
    expect(failed.history[0]).toMatchObject({ attempt: 1, outcome: 'FAILED', statusCode: 500, answer: 'broken' });
    // The oldest were trimmed: what is left is the newest of the old ones.
    expect(failed.history.slice(1).map((a) => a.error)).toEqual(Array.from({ length: ATTEMPT_HISTORY - 1 }, (_, i) => `old ${ATTEMPT_HISTORY + 3 - i}`));
    expect(((await db.task.findUniqueOrThrow({ where: { id } })).history as unknown[]).length).toBe(ATTEMPT_HISTORY);
    // A restart counts from 1 again; the attempts before it stay.
    await rpc(g.url, 'restartTask', { queueName: 'trim', name: 'long' });
    await eventually(async () => (await task('trim', 'long')).history.filter((a) => a.outcome === 'FAILED').length === 2);

    // A long answer is kept cut.
    await rpc(g.url, 'createQueue', { name: 'wordy' });
    await create('wordy', 'big', { target: target('/x?answer=3000') });
    const big = await eventually(async () => {
      const now = await task('wordy', 'big');
      return now.status === 'SUCCEEDED' && now;
    });
    expect(big.history[0]!.answer).toBe('a'.repeat(ATTEMPT_ANSWER_LIMIT));
    expect((await get('wordy', 'big')).result.body).toHaveLength(3000);

    // An attempt whose process stopped (its lease expired) is found by the next claim and kept as LOST.
    await rpc(g.url, 'createQueue', { name: 'lost' });
    await rpc(g.url, 'pauseQueue', { name: 'lost' });
    await create('lost', 'orphan', { target: target('/x') });
    const started = new Date(Date.now() - 120_000);
    await db.task.updateMany({
      where: { queueName: 'lost', name: 'orphan' },
      data: { status: 'RUNNING', attempts: 1, lockedBy: 'a-process-that-died', lockedUntil: new Date(Date.now() - 60_000), startTime: started },
    });
    await rpc(g.url, 'resumeQueue', { name: 'lost' });
    const recovered = await eventually(async () => {
      const now = await task('lost', 'orphan');
      return now.status === 'SUCCEEDED' && now;
    });
    expect(recovered.history.map((a) => [a.attempt, a.outcome])).toEqual([
      [2, 'SUCCEEDED'],
      [1, 'LOST'],
    ]);
    expect(recovered.history[1]).toMatchObject({ startTime: started.toISOString(), error: expect.stringContaining('lease expired') });
  }, 30_000);
});
