import { useEffect, useMemo, useState } from 'react';
import { useInterval, useMay, useMutation, useQuery } from '../api/hooks';
import { CancelTasks, FoundTasks, PurgeTasks, RetryTasks, Units } from '../api/operations';
import type { TaskFilter, TaskStatus } from '../gql/graphql';
import { Alert } from '../parts/alert';
import { Confirm } from '../parts/confirm';
import { TaskCells, TASK_STATUSES } from '../parts/format';
import { Pager, useListState } from '../parts/pager';
import { href, useLocated } from '../route';
import { UnitList } from './notifications';

// Failures across every queue (Cloud Tasks' and Bull Board's first stop when something breaks): FAILED tasks, most
// recently ended first, narrowed by queue, name, error text and time, with bulk retry and purge of a selection or of
// everything matching; the same list by any other status (cancel waiting tasks, purge ended ones); and failed
// notification units with their resend. Every action is a mutation of the gateway's API, bounded and confirmed.

const PAGE_SIZE = 25;
/** What one bulk call changes at most (the gateway's BULK_TASK_LIMIT). */
const BULK_LIMIT = 1000;
/** The list is read again this often (failures arrive from every queue; no one subscription covers them all). */
const REFRESH_MS = 10_000;

const FILTERS = ['status', 'queue', 'name', 'error', 'since'] as const;
/** The filters typed as text, by their name in the address. */
const TEXT_FILTERS: [(typeof FILTERS)[number], string][] = [
  ['queue', 'Queue'],
  ['name', 'Name contains'],
  ['error', 'Error contains'],
];
const SINCE: Record<string, { label: string; ms: number }> = {
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
};
/** `status` absent from the address: FAILED (the page's purpose); ANY: every status. */
const ANY = 'ANY';

type Action = 'retry' | 'cancel' | 'purge';
const ACTIONS: Record<Action, { label: string; verb: string; statuses: readonly TaskStatus[] }> = {
  retry: { label: 'Retry', verb: 'retried', statuses: ['FAILED'] },
  cancel: {
    label: 'Cancel',
    verb: 'cancelled',
    statuses: ['READY', 'BLOCKED'],
  },
  purge: {
    label: 'Purge',
    verb: 'purged',
    statuses: ['SUCCEEDED', 'FAILED', 'CANCELLED'],
  },
};

const keyOf = (t: { queueName: string; name: string }) => `${t.queueName}/${t.name}`;

export function FailuresPage() {
  const may = useMay();
  const list = useListState(FILTERS, PAGE_SIZE);
  const { status: statusParam, queue, name, error: errorText, since } = list.values;
  const status = statusParam === ANY ? undefined : ((statusParam || 'FAILED') as TaskStatus);
  // The start of the window, fixed when it is chosen (a filter that moved with the clock would read anew each render).
  const finishedAfter = useMemo(() => (SINCE[since] ? new Date(Date.now() - SINCE[since]!.ms).toISOString() : undefined), [since]);
  const filter: TaskFilter = {
    ...(status && { status }),
    ...(queue.trim() && { queueName: queue.trim() }),
    ...(name.trim() && { nameContains: name.trim() }),
    ...(errorText.trim() && { errorContains: errorText.trim() }),
    ...(finishedAfter && { finishedAfter }),
  };
  const { data, error, loading, refetch } = useQuery(FoundTasks, {
    filter,
    first: PAGE_SIZE,
    after: list.after,
  });
  useInterval(refetch, REFRESH_MS);
  const tasks = data?.tasks;

  // The selection belongs to the rows shown: another filter or page starts with none.
  const { params } = useLocated();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  useEffect(() => setSelected(new Set()), [params.toString()]);
  const shown = tasks?.nodes ?? [];
  const allShown = shown.length > 0 && shown.every((t) => selected.has(keyOf(t)));
  // What an action on the selection applies to: the selected rows still shown (a refresh may have taken some away).
  const chosen = shown.filter((t) => selected.has(keyOf(t)));
  const toggle = (key: string) => setSelected((s) => (s.has(key) ? (s.delete(key), new Set(s)) : new Set(s.add(key))));

  const offered = (Object.keys(ACTIONS) as Action[]).filter((action) => may('Mutation', `${action}Tasks`) && (status === undefined || ACTIONS[action].statuses.includes(status)));
  const [asking, setAsking] = useState<{
    action: Action;
    scope: 'selected' | 'matching';
    count: number;
  }>();
  const [done, setDone] = useState<string>();
  const runs = {
    retry: useMutation(RetryTasks),
    cancel: useMutation(CancelTasks),
    purge: useMutation(PurgeTasks),
  };
  const failed = Object.values(runs).find((r) => r.error)?.error;
  const busy = Object.values(runs).some((r) => r.busy);

  const apply = async (action: Action, scope: 'selected' | 'matching', count: number) => {
    setAsking(undefined);
    setDone(undefined);
    const run = runs[action].run;
    let changed = 0;
    let matched = 0;
    if (scope === 'selected') {
      const keys = chosen.map((t) => ({ queueName: t.queueName, name: t.name }));
      const answer = await run({ select: { keys } });
      const result = answer && Object.values(answer)[0];
      changed = result?.changed ?? 0;
      matched = result?.matched ?? 0;
    } else {
      // At most the count the operator confirmed, a call of at most BULK_LIMIT at a time: tasks that start matching
      // meanwhile are not swept up beyond it.
      while (changed < count) {
        const answer = await run({
          select: { filter, atMost: Math.min(BULK_LIMIT, count - changed) },
        });
        const result = answer && Object.values(answer)[0];
        if (!result) break;
        changed += result.changed;
        matched += result.matched;
        if (!result.more || result.changed === 0) break;
      }
    }
    setSelected(new Set());
    setDone(
      `${changed.toLocaleString('en')} ${changed === 1 ? 'task' : 'tasks'} ${ACTIONS[action].verb}${matched > changed ? ` (${(matched - changed).toLocaleString('en')} left as they were: they changed meanwhile or a waiting task depends on them)` : ''}.`,
    );
    refetch();
  };

  return (
    <section aria-labelledby="failures-title">
      <h1 id="failures-title">Failures</h1>
      <h2>{status === 'FAILED' ? 'Failed tasks' : status ? `${status.toLowerCase()[0]!.toUpperCase()}${status.toLowerCase().slice(1)} tasks` : 'Tasks'} in every queue</h2>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={statusParam || 'FAILED'} onChange={(e) => list.set('status', e.target.value === 'FAILED' ? '' : e.target.value)}>
            {TASK_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
            <option value={ANY}>any</option>
          </select>
        </label>
        {TEXT_FILTERS.map(([key, label]) => (
          <label key={key}>
            {label}
            <input type="search" value={list.values[key]} onChange={(e) => list.set(key, e.target.value)} />
          </label>
        ))}
        <label>
          Ended
          <select value={since} onChange={(e) => list.set('since', e.target.value)}>
            <option value="">Any time</option>
            {Object.entries(SINCE).map(([value, { label }]) => (
              <option key={value} value={value}>
                {label.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </form>
      {error && <Alert>{error.message}</Alert>}
      {failed && <Alert>{failed.message}</Alert>}
      {done && (
        <p className="notice" role="status">
          {done}
        </p>
      )}
      {offered.length > 0 && (
        <div className="actions bulk" aria-label="Bulk actions">
          {offered.map((action) => (
            <button key={`sel-${action}`} type="button" disabled={busy || chosen.length === 0} onClick={() => setAsking({ action, scope: 'selected', count: chosen.length })}>
              {ACTIONS[action].label} selected ({chosen.length})
            </button>
          ))}
          {status !== undefined &&
            offered.map((action) => (
              <button
                key={`all-${action}`}
                type="button"
                disabled={busy || !tasks?.totalCount}
                onClick={() =>
                  tasks &&
                  setAsking({
                    action,
                    scope: 'matching',
                    count: tasks.totalCount,
                  })
                }
              >
                {ACTIONS[action].label} all {tasks ? tasks.totalCount.toLocaleString('en') : ''} matching
              </button>
            ))}
        </div>
      )}
      <div className={`table found-tasks${offered.length > 0 ? ' selectable' : ''}`} role="table" aria-label="Tasks found">
        <div className="thead" role="row">
          {offered.length > 0 && (
            <span role="columnheader">
              <input type="checkbox" aria-label="Select every task shown" checked={allShown} onChange={() => setSelected(allShown ? new Set() : new Set(shown.map(keyOf)))} />
            </span>
          )}
          <span role="columnheader">Task</span>
          <span role="columnheader">Status</span>
          <span role="columnheader">Attempts</span>
          <span role="columnheader">Ended</span>
        </div>
        {shown.map((t) => (
          <div className="tr" role="row" key={t.id} data-task={keyOf(t)}>
            {offered.length > 0 && (
              <span role="cell">
                <input type="checkbox" aria-label={`Select ${keyOf(t)}`} checked={selected.has(keyOf(t))} onChange={() => toggle(keyOf(t))} />
              </span>
            )}
            <span role="cell" className="name">
              <a href={href('queues', t.queueName, 'tasks', t.name)}>{t.name}</a> <span className="muted">in {t.queueName}</span>
              {t.lastError && <small className="error-text">{t.lastError}</small>}
            </span>
            <TaskCells task={t} timeLabel="Ended" at={t.finishTime ?? t.updateTime} />
          </div>
        ))}
      </div>
      <Pager state={list} size={PAGE_SIZE} total={tasks?.totalCount} hasNext={tasks?.pageInfo.hasNextPage ?? false} label="tasks" loading={loading} />
      {offered.length > 0 && (
        <Confirm
          open={asking !== undefined}
          title={asking ? `${ACTIONS[asking.action].label} ${asking.count.toLocaleString('en')} ${asking.count === 1 ? 'task' : 'tasks'}?` : ''}
          confirmLabel={asking ? `${ACTIONS[asking.action].label} ${asking.count.toLocaleString('en')}` : ''}
          onConfirm={() => asking && void apply(asking.action, asking.scope, asking.count)}
          onCancel={() => setAsking(undefined)}
        >
          {asking && (
            <p>
              {asking.scope === 'selected' ? `The ${asking.count.toLocaleString('en')} selected` : `The ${asking.count.toLocaleString('en')} tasks matching these filters (at most that many)`}{' '}
              {asking.action === 'retry'
                ? 'run again from their first attempt.'
                : asking.action === 'cancel'
                  ? 'are cancelled and will not run.'
                  : 'are deleted with their history; this cannot be undone.'}{' '}
              Tasks whose status does not allow it are left as they are.
            </p>
          )}
        </Confirm>
      )}
      {may('Query', 'notifications') && <FailedUnits errorContains={errorText.trim()} failedAfter={finishedAfter} />}
    </section>
  );
}

/** The most recent failed notification units of every system (by the page's error text and time), each with its resend. */
function FailedUnits({ errorContains, failedAfter }: { errorContains: string; failedAfter: string | undefined }) {
  const filter = { status: 'FAILED' as const, ...(errorContains && { errorContains }), ...(failedAfter && { updatedAfter: failedAfter }) };
  const { data, error, refetch } = useQuery(Units, { filter, first: 10, after: null });
  useInterval(refetch, REFRESH_MS);
  const page = data?.notifications;
  return (
    <>
      <h2>Failed notification units</h2>
      {error && <Alert>{error.message}</Alert>}
      {page && page.totalCount === 0 && <p className="muted">No failed notification unit.</p>}
      {page && <UnitList units={page.nodes} onResent={refetch} />}
      {page && page.totalCount > page.nodes.length && (
        <p>
          <a href={`${href('notifications')}?status=FAILED`}>All {page.totalCount.toLocaleString('en')} failed units</a>
        </p>
      )}
    </>
  );
}
