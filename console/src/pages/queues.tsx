import { useEffect, useRef, useState } from 'react';
import { useMay, useMutation, useQuery, useSubscription } from '../api/hooks';
import { ChangeQueueRate, CloseQueue, DeleteQueue, OpenQueue, PauseQueue, QueueChanged, Queues, QueuesChanged, ResumeQueue, SummaryChanged } from '../api/operations';
import type { QueueFieldsFragment, QueueFilter, QueueStatus } from '../gql/graphql';
import { Alert } from '../parts/alert';
import { Confirm } from '../parts/confirm';
import { Pager, useListState } from '../parts/pager';
import { href } from '../route';
import { NewQueueForm } from './settings-forms';

const PAGE_SIZE = 25;
/** Queues created, changed or deleted together (a deployment creating fifty) refresh the list once. */
const SETTLE_MS = 300;
const FILTERS = ['name', 'state'] as const;

export function QueuesPage() {
  const may = useMay();
  const list = useListState(FILTERS, PAGE_SIZE);
  const { name: prefix, state } = list.values;
  const filter: QueueFilter = {
    ...(prefix.trim() && { namePrefix: prefix.trim() }),
    ...(state === 'OPEN' || state === 'CLOSE' ? { status: state as QueueStatus } : state === 'paused' ? { paused: true } : {}),
  };
  const { data, error, refetch, loading } = useQuery(Queues, { filter, first: PAGE_SIZE, after: list.after });
  // A queue created (or deleted) anywhere shows on the open list: the page is read again, settled.
  const settle = useRef<ReturnType<typeof setTimeout>>(undefined);
  useSubscription(QueuesChanged, {}, () => {
    clearTimeout(settle.current);
    settle.current = setTimeout(refetch, SETTLE_MS);
  });
  useEffect(() => () => clearTimeout(settle.current), []);
  const page = data?.queues;
  return (
    <section aria-labelledby="queues-title">
      <h1 id="queues-title">Queues</h1>
      {may('Mutation', 'createQueue') && <NewQueueForm />}
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name starts with
          <input type="search" value={prefix} onChange={(e) => list.set('name', e.target.value)} />
        </label>
        <label>
          State
          <select value={state} onChange={(e) => list.set('state', e.target.value)}>
            <option value="">Any</option>
            <option value="OPEN">Open</option>
            <option value="CLOSE">Closed</option>
            <option value="paused">Paused</option>
          </select>
        </label>
      </form>
      {error && <Alert>{error.message}</Alert>}
      <div className="table queues" role="table" aria-label="Queues">
        <div className="thead" role="row">
          <span role="columnheader">Queue</span>
          <span role="columnheader">State</span>
          <span role="columnheader">Rate</span>
          <span role="columnheader">Tasks by status</span>
          <span role="columnheader">Actions</span>
        </div>
        {page?.nodes.map((queue) => <QueueRow key={queue.name} queue={queue} onGone={refetch} />)}
      </div>
      <Pager state={list} size={PAGE_SIZE} total={page?.totalCount} hasNext={page?.pageInfo.hasNextPage ?? false} label="queues" loading={loading} />
    </section>
  );
}

type Summary = QueueFieldsFragment['tasksSummary'];

/** One queue, kept current by its own two subscriptions while it is on screen. */
function QueueRow({ queue: initial, onGone }: { queue: QueueFieldsFragment; onGone(): void }) {
  const [queue, setQueue] = useState(initial);
  const [summary, setSummary] = useState<Summary>(initial.tasksSummary);
  // A new read of the list (a filter, a page, a deletion) brings the row's current state.
  useEffect(() => {
    setQueue(initial);
    setSummary(initial.tasksSummary);
  }, [initial]);
  useSubscription(QueueChanged, { name: initial.name }, ({ queueChanged }) => (queueChanged ? setQueue((q) => ({ ...q, ...queueChanged })) : onGone()));
  useSubscription(SummaryChanged, { queueName: initial.name }, ({ tasksSummaryChanged }) => setSummary(tasksSummaryChanged));
  return (
    <div className="tr" role="row" data-queue={queue.name}>
      <span role="cell" className="name">
        <a href={href('queues', queue.name)}>{queue.name}</a>
        {queue.description && <small className="muted">{queue.description}</small>}
      </span>
      <span role="cell" data-label="State" className="state">
        <span className={`status status-${queue.status.toLowerCase()}`}>{queue.status === 'OPEN' ? 'open' : 'closed'}</span>
        {queue.paused && <span className="status status-paused">paused</span>}
      </span>
      <span role="cell" data-label="Rate">
        {queue.rate}
      </span>
      <span role="cell" data-label="Tasks">
        <Counts summary={summary} />
      </span>
      <span role="cell" data-label="Actions">
        <QueueActions queue={queue} onChanged={(changed) => setQueue((q) => ({ ...q, ...changed }))} onDeleted={onGone} />
      </span>
    </div>
  );
}

export function Counts({ summary }: { summary: Summary }) {
  const parts = [
    ['ready', summary.ready],
    ['running', summary.running],
    ['blocked', summary.blocked],
    ['succeeded', summary.succeeded],
    ['failed', summary.failed],
    ['cancelled', summary.cancelled],
  ] as const;
  return (
    <span className="counts" aria-label={parts.map(([k, n]) => `${n} ${k}`).join(', ')}>
      {parts.map(([status, n]) => (
        <span key={status} className={`count status-${status}${n === 0 ? ' zero' : ''}`} data-status={status} title={status}>
          <b>{n.toLocaleString('en')}</b> {status}
        </span>
      ))}
    </span>
  );
}

/** The actions this key may take on a queue; none are offered that the gateway would refuse for want of scope. */
export function QueueActions({ queue, onChanged, onDeleted }: { queue: Pick<QueueFieldsFragment, 'name' | 'paused' | 'status' | 'rate' | 'tasksSummary'>; onChanged(q: Partial<QueueFieldsFragment>): void; onDeleted(): void }) {
  const may = useMay();
  const pause = useMutation(PauseQueue);
  const resume = useMutation(ResumeQueue);
  const open = useMutation(OpenQueue);
  const close = useMutation(CloseQueue);
  const rate = useMutation(ChangeQueueRate);
  const remove = useMutation(DeleteQueue);
  const [newRate, setNewRate] = useState(String(queue.rate));
  // The box shows the queue's rate as it is now: after a change made anywhere, not the one it was opened with.
  useEffect(() => setNewRate(String(queue.rate)), [queue.rate]);
  const [confirming, setConfirming] = useState(false);
  const name = queue.name;
  const error = pause.error ?? resume.error ?? open.error ?? close.error ?? rate.error ?? remove.error;
  const clear = () => [pause, resume, open, close, rate, remove].forEach((m) => m.clear());
  const buttons = [
    queue.paused
      ? may('Mutation', 'resumeQueue') && (
          <button key="resume" type="button" onClick={async () => (await resume.run({ name }))?.resumeQueue && onChanged({ paused: false })}>
            Resume
          </button>
        )
      : may('Mutation', 'pauseQueue') && (
          <button key="pause" type="button" onClick={async () => (await pause.run({ name }))?.pauseQueue && onChanged({ paused: true })}>
            Pause
          </button>
        ),
    queue.status === 'OPEN'
      ? may('Mutation', 'closeQueue') && (
          <button key="close" type="button" onClick={async () => (await close.run({ name }))?.closeQueue && onChanged({ status: 'CLOSE' })}>
            Close
          </button>
        )
      : may('Mutation', 'openQueue') && (
          <button key="open" type="button" onClick={async () => (await open.run({ name }))?.openQueue && onChanged({ status: 'OPEN' })}>
            Open
          </button>
        ),
    may('Mutation', 'changeQueueRate') && (
      <form
        key="rate"
        className="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          const changed = await rate.run({ name, rate: Number(newRate) });
          if (changed) onChanged({ rate: changed.changeQueueRate.rate });
        }}
      >
        <label>
          <span className="sr-only">Rate of {name}</span>
          <input type="number" min={1} step={1} required value={newRate} onChange={(e) => setNewRate(e.target.value)} size={5} />
        </label>
        <button type="submit">Set rate</button>
      </form>
    ),
    may('Mutation', 'deleteQueue') && (
      <button key="delete" type="button" className="danger" onClick={() => setConfirming(true)}>
        Delete
      </button>
    ),
  ].filter(Boolean);
  return (
    <div className="actions">
      {buttons.length ? buttons : <span className="muted">read only</span>}
      {error && <Alert onClose={clear}>{error.message}</Alert>}
      {may('Mutation', 'deleteQueue') && (
      <Confirm
        open={confirming}
        title={`Delete queue ${name}?`}
        confirmLabel="Delete queue"
        onCancel={() => setConfirming(false)}
        onConfirm={async () => {
          setConfirming(false);
          if (await remove.run({ name })) onDeleted();
        }}
      >
        <p>
          The queue and its {queue.tasksSummary.total.toLocaleString('en')} tasks are removed for good. The gateway refuses while one of them runs.
        </p>
      </Confirm>
      )}
    </div>
  );
}
