import { useEffect, useRef, useState } from 'react';
import { useInterval, useMay, useMutation, useQuery, useSubscription } from '../api/hooks';
import { CancelTask, QueueActivity, QueueChanged, QueueTasks, RestartTask, RunTaskNow, SummaryChanged, TaskDetail, TaskStatus } from '../api/operations';
import type { QueueFieldsFragment } from '../gql/graphql';
import { Alert } from '../parts/alert';
import { Status, TaskCells, Time, TASK_STATUSES } from '../parts/format';
import { Pager, useListState } from '../parts/pager';
import { href } from '../route';
import { Counts, QueueActions } from './queues';
import { QueueSettingsForm } from './settings-forms';
import { ActivityChart } from '../parts/chart';

const PAGE_SIZE = 25;
/** Changes arriving together (a busy queue) refresh the list once. */
const SETTLE_MS = 300;

const FILTERS = ['status', 'name'] as const;

/**
 * One queue (mounted afresh for each queue, so nothing typed or chosen on one queue's page carries over to the next):
 * its head and counts follow its subscriptions from their first event, the state once they listen; the list of
 * tasks is read again after each change of the counts (settled), so it misses no change either.
 */
export function QueuePage({ queue: name, task }: { queue: string; task: string | undefined }) {
  const may = useMay();
  const list = useListState(FILTERS, PAGE_SIZE);
  const { status, name: search } = list.values;
  const filter = { ...(status && { status: status as (typeof TASK_STATUSES)[number] }), ...(search.trim() && { nameContains: search.trim() }) };
  const { data, error, refetch, loading } = useQuery(QueueTasks, { queueName: name, filter, first: PAGE_SIZE, after: list.after });
  const [queue, setQueue] = useState<QueueFieldsFragment>();
  const [gone, setGone] = useState(false);
  // The read gives the head until the subscriptions' first events do.
  useEffect(() => {
    if (data?.queue) setQueue((q) => q ?? data.queue);
  }, [data]);
  const settle = useRef<ReturnType<typeof setTimeout>>(undefined);
  useSubscription(QueueChanged, { name }, ({ queueChanged }) => (queueChanged ? setQueue((q) => (q ? { ...q, ...queueChanged } : q)) : setGone(true)));
  useSubscription(SummaryChanged, { queueName: name }, ({ tasksSummaryChanged }) => {
    setQueue((q) => q && { ...q, tasksSummary: tasksSummaryChanged });
    clearTimeout(settle.current);
    settle.current = setTimeout(refetch, SETTLE_MS);
  });
  useEffect(() => () => clearTimeout(settle.current), []);
  const tasks = data?.queue.tasks;
  return (
    <section aria-labelledby="queue-title">
      <p className="crumbs">
        <a href={href('queues')}>Queues</a> /
      </p>
      <h1 id="queue-title">Queue {name}</h1>
      {gone && <Alert>This queue was deleted.</Alert>}
      {error && <Alert>{error.message}</Alert>}
      {queue && !gone && (
        <div className="queue-head">
          <p>
            <span className={`status status-${queue.status.toLowerCase()}`}>{queue.status === 'OPEN' ? 'open' : 'closed'}</span>
            {queue.paused && <span className="status status-paused">paused</span>} rate {queue.rate}
          </p>
          <Counts summary={queue.tasksSummary} />
          <QueueActions queue={queue} onChanged={(c) => setQueue((q) => q && { ...q, ...c })} onDeleted={() => setGone(true)} />
          {may('Mutation', 'updateQueue') && <QueueSettingsForm name={name} />}
        </div>
      )}
      {may('Query', 'taskActivity') && !gone && <QueueThroughput name={name} />}
      {task && <TaskPanel key={task} queueName={name} name={task} onChanged={refetch} closeHref={list.at(href('queues', name))} />}
      <h2>Tasks</h2>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name contains
          <input type="search" value={search} onChange={(e) => list.set('name', e.target.value)} />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => list.set('status', e.target.value)}>
            <option value="">Any</option>
            {TASK_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </form>
      <div className="table tasks" role="table" aria-label={`Tasks of ${name}`}>
        <div className="thead" role="row">
          <span role="columnheader">Task</span>
          <span role="columnheader">Status</span>
          <span role="columnheader">Attempts</span>
          <span role="columnheader">Updated</span>
        </div>
        {tasks?.nodes.map((t) => (
          <div className="tr" role="row" key={t.id} data-task={t.name}>
            <span role="cell" className="name">
              <a href={list.at(href('queues', name, 'tasks', t.name))} aria-current={t.name === task ? 'true' : undefined}>
                {t.name}
              </a>
              {t.lastError && <small className="muted">{t.lastError}</small>}
            </span>
            <TaskCells task={t} timeLabel="Updated" at={t.updateTime} />
          </div>
        ))}
      </div>
      <Pager state={list} size={PAGE_SIZE} total={tasks?.totalCount} hasNext={tasks?.pageInfo.hasNextPage ?? false} label="tasks" loading={loading} />
    </section>
  );
}

/** How often the queue's chart is read again: it counts whole minutes. */
const CHART_REFRESH_MS = 15_000;

/** The queue's tasks ended per minute over the last hour. */
function QueueThroughput({ name }: { name: string }) {
  const { data, refetch } = useQuery(QueueActivity, { queueName: name });
  useInterval(refetch, CHART_REFRESH_MS);
  return (
    <div className="charts">
      <ActivityChart title="Tasks ended per minute" series={data?.taskActivity ?? []} succeeded="succeeded" failed="failed" />
    </div>
  );
}

interface Step {
  status: string;
  at: string | null;
  note: string;
}

/**
 * One task: its target, attempts, last answer and the timeline of its statuses. The gateway keeps a task's times
 * (created, last started, finished), not every status it passed through; the timeline shows those, and every
 * change seen live while the panel is open.
 */
function TaskPanel({ queueName, name, onChanged, closeHref }: { queueName: string; name: string; onChanged(): void; closeHref: string }) {
  const may = useMay();
  const { data, error, refetch } = useQuery(TaskDetail, { queueName, name });
  const [seen, setSeen] = useState<Step[]>([]);
  // From the task's status once the subscription listens, through restarts made here or anywhere else. The first
  // event is the status then: a change only if the panel's read showed another one (made between the two).
  const first = useRef(true);
  useSubscription(TaskStatus, { queueName, name }, ({ taskStatusChanged: { status } }) => {
    const known = first.current && data?.task.status === status;
    first.current = false;
    if (!known) setSeen((s) => [...s, { status, at: new Date().toISOString(), note: 'seen live' }]);
    refetch();
  });
  const cancel = useMutation(CancelTask);
  const restart = useMutation(RestartTask);
  const runNow = useMutation(RunTaskNow);
  const task = data?.task;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [name]);
  const recorded: Step[] = task
    ? [
        { status: 'CREATED', at: task.createTime, note: task.scheduleTime ? `not before ${new Date(task.scheduleTime).toLocaleString()}` : '' },
        ...(task.startTime ? [{ status: 'RUNNING', at: task.startTime, note: `attempt ${task.attempts} of ${task.maxAttempts} started` }] : []),
        ...(task.finishTime ? [{ status: task.status, at: task.finishTime, note: 'finished' }] : []),
      ]
    : [];
  // A change seen live that the recorded times already show (the start, the end) is not listed twice.
  const steps = [...recorded, ...seen.filter((s) => !recorded.some((r) => r.status === s.status))].sort((a, b) => (a.at ?? '').localeCompare(b.at ?? ''));
  const changed = () => {
    refetch();
    onChanged();
  };
  return (
    <article className="panel" aria-labelledby="task-title">
      <h2 id="task-title" tabIndex={-1} ref={heading}>
        Task {name} {task && <Status value={task.status} />}
      </h2>
      <a className="close" href={closeHref}>
        Close
      </a>
      {error && <Alert>{error.message}</Alert>}
      {task && (
        <>
          <dl className="facts">
            <dt>Target</dt>
            <dd>
              <code>
                {task.target.method} {task.target.url}
              </code>{' '}
              (timeout {task.target.timeoutSeconds} s)
            </dd>
            <dt>Attempts</dt>
            <dd>
              {task.attempts} of {task.maxAttempts} (backoff {task.minBackoffMs}–{task.maxBackoffMs} ms)
            </dd>
            {task.nextAttemptAt && task.attempts > 0 && (
              <>
                <dt>Next attempt</dt>
                <dd>
                  <Time at={task.nextAttemptAt} /> <span className="muted">(after the backoff, once the queue has a free slot)</span>
                </dd>
              </>
            )}
            <dt>Last answer</dt>
            <dd>{task.result ? <code>HTTP {task.result.statusCode} {task.result.body.slice(0, 200)}</code> : <span className="muted">none yet</span>}</dd>
            {task.lastError && (
              <>
                <dt>Last error</dt>
                <dd>{task.lastError}</dd>
              </>
            )}
            {task.dependsOn.length > 0 && (
              <>
                <dt>Depends on</dt>
                <dd>{task.dependsOn.join(', ')}</dd>
              </>
            )}
          </dl>
          <Payload value={task.payload} />
          <h3>Attempts</h3>
          {task.history.length === 0 ? (
            <p className="muted">No attempt has ended yet.</p>
          ) : (
            <div className="table attempts" role="table" aria-label={`Attempts of ${name}`}>
              <div className="thead" role="row">
                <span role="columnheader">#</span>
                <span role="columnheader">Started</span>
                <span role="columnheader">Took</span>
                <span role="columnheader">Outcome</span>
                <span role="columnheader">Answer or error</span>
              </div>
              {task.history.map((a) => (
                <div className="tr" role="row" key={`${a.attempt}-${a.startTime}`} data-attempt={a.attempt}>
                  <span role="cell">{a.attempt}</span>
                  <span role="cell" data-label="Started">
                    <Time at={a.startTime} />
                  </span>
                  <span role="cell" data-label="Took">
                    {a.durationMs.toLocaleString('en')} ms
                  </span>
                  <span role="cell" data-label="Outcome">
                    <Status value={a.outcome} />
                    {a.statusCode !== null && a.statusCode !== undefined && <span className="muted"> HTTP {a.statusCode}</span>}
                  </span>
                  <span role="cell" data-label="Answer" className="outcome">
                    {a.error && <span className="error-text">{a.error}</span>} {a.answer && <code>{a.answer.slice(0, 300)}</code>}
                  </span>
                </div>
              ))}
            </div>
          )}
          <h3>Timeline</h3>
          <ol className="timeline">
            {steps.map((step, i) => (
              <li key={`${step.status}-${step.at}-${i}`}>
                <Status value={step.status} /> <Time at={step.at} /> <span className="muted">{step.note}</span>
              </li>
            ))}
          </ol>
          <div className="actions">
            {may('Mutation', 'cancelTask') && (task.status === 'READY' || task.status === 'BLOCKED') && (
              <button type="button" onClick={async () => (await cancel.run({ queueName, name })) && changed()}>
                Cancel task
              </button>
            )}
            {may('Mutation', 'runTaskNow') && waitsOnTime(task) && (
              <button type="button" onClick={async () => (await runNow.run({ queueName, name })) && changed()}>
                Run now
              </button>
            )}
            {may('Mutation', 'restartTask') && task.status === 'FAILED' && (
              <button
                type="button"
                onClick={async () => (await restart.run({ queueName, name })) && changed()}
              >
                Restart task
              </button>
            )}
          </div>
          {(cancel.error ?? restart.error ?? runNow.error) && <Alert>{(cancel.error ?? restart.error ?? runNow.error)!.message}</Alert>}
        </>
      )}
    </article>
  );
}

/**
 * Whether a task waits only on time: a READY one whose next attempt is later (a backoff), or a BLOCKED one with a
 * later schedule time (its dependencies the gateway checks: a refusal says so).
 */
function waitsOnTime(task: { status: string; nextAttemptAt?: string | null; scheduleTime?: string | null }): boolean {
  const later = (at: string | null | undefined) => !!at && Date.parse(at) > Date.now();
  return (task.status === 'READY' && later(task.nextAttemptAt)) || (task.status === 'BLOCKED' && later(task.scheduleTime));
}

/** The payload as JSON, at most PAYLOAD_SHOWN characters of it (a payload can be large; the page stays light). */
const PAYLOAD_SHOWN = 2048;

function Payload({ value }: { value: unknown }) {
  if (value === null || value === undefined) return null;
  const text = JSON.stringify(value, null, 2);
  return (
    <details className="payload">
      <summary>
        Payload <span className="muted">({text.length.toLocaleString('en')} characters{text.length > PAYLOAD_SHOWN ? `, the first ${PAYLOAD_SHOWN.toLocaleString('en')} shown` : ''})</span>
      </summary>
      <pre>{text.slice(0, PAYLOAD_SHOWN)}</pre>
    </details>
  );
}
