import { useEffect, useRef, useState } from 'react';
import { useMay, useMutation, useQuery, useSubscription } from '../api/hooks';
import { CancelTask, QueueChanged, QueueTasks, RestartTask, SummaryChanged, TaskDetail, TaskStatus } from '../api/operations';
import type { QueueFieldsFragment } from '../gql/graphql';
import { Alert } from '../parts/alert';
import { Status, Time, TASK_STATUSES } from '../parts/format';
import { Pager, usePageCursor } from '../parts/pager';
import { href } from '../route';
import { Counts, QueueActions } from './queues';

const PAGE_SIZE = 25;
/** Changes arriving together (a busy queue) refresh the list once. */
const SETTLE_MS = 300;

export function QueuePage({ queue: name, task }: { queue: string; task: string | undefined }) {
  const [status, setStatus] = useState('');
  const [search, setSearch] = useState('');
  const cursor = usePageCursor();
  const filter = { ...(status && { status: status as (typeof TASK_STATUSES)[number] }), ...(search.trim() && { name: search.trim() }) };
  const { data, error, refetch } = useQuery(QueueTasks, { queueName: name, filter, first: PAGE_SIZE, after: cursor.after });
  const [queue, setQueue] = useState<QueueFieldsFragment>();
  const [gone, setGone] = useState(false);
  useEffect(() => {
    if (data?.queue) setQueue(data.queue);
  }, [data]);
  const settle = useRef<ReturnType<typeof setTimeout>>(undefined);
  useSubscription(QueueChanged, { name }, ({ queueChanged }) => (queueChanged ? setQueue((q) => q && { ...q, ...queueChanged }) : setGone(true)));
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
        </div>
      )}
      {task && <TaskPanel queueName={name} name={task} onChanged={refetch} />}
      <h2>Tasks</h2>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name starts with
          <input type="search" value={search} onChange={(e) => (setSearch(e.target.value), cursor.reset())} />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => (setStatus(e.target.value), cursor.reset())}>
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
              <a href={href('queues', name, 'tasks', t.name)} aria-current={t.name === task ? 'true' : undefined}>
                {t.name}
              </a>
              {t.lastError && <small className="muted">{t.lastError}</small>}
            </span>
            <span role="cell" data-label="Status">
              <Status value={t.status} />
            </span>
            <span role="cell" data-label="Attempts">
              {t.attempts}/{t.maxAttempts}
            </span>
            <span role="cell" data-label="Updated">
              <Time at={t.updateTime} />
            </span>
          </div>
        ))}
      </div>
      <Pager cursor={cursor} size={PAGE_SIZE} total={tasks?.totalCount} hasNext={tasks?.pageInfo.hasNextPage ?? false} endCursor={tasks?.pageInfo.endCursor} label="tasks" />
    </section>
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
function TaskPanel({ queueName, name, onChanged }: { queueName: string; name: string; onChanged(): void }) {
  const may = useMay();
  const { data, error, refetch } = useQuery(TaskDetail, { queueName, name });
  const [seen, setSeen] = useState<Step[]>([]);
  // taskStatusChanged completes after an end status; a restart begins a new run to follow.
  const [run, setRun] = useState(0);
  useEffect(() => setSeen([]), [queueName, name]);
  useSubscription(
    TaskStatus,
    { queueName, name },
    ({ taskStatusChanged }) => {
      setSeen((s) => [...s, { status: taskStatusChanged.status, at: new Date().toISOString(), note: 'seen live' }]);
      refetch();
    },
    { round: run },
  );
  const cancel = useMutation(CancelTask);
  const restart = useMutation(RestartTask);
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
      <a className="close" href={href('queues', queueName)}>
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
            {may('Mutation', 'restartTask') && task.status === 'FAILED' && (
              <button
                type="button"
                onClick={async () => {
                  if (await restart.run({ queueName, name })) {
                    setRun((r) => r + 1);
                    changed();
                  }
                }}
              >
                Restart task
              </button>
            )}
          </div>
          {(cancel.error ?? restart.error) && <Alert>{(cancel.error ?? restart.error)!.message}</Alert>}
        </>
      )}
    </article>
  );
}
