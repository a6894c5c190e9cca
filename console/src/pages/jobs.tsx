import { useEffect, useState } from 'react';
import { useMay, useMutation, useQuery, useSubscription } from '../api/hooks';
import { Jobs, PauseJob, ResumeJob, RunJob, InstanceChanged } from '../api/operations';
import type { JobFilter, JobStatus, JobsQuery } from '../gql/graphql';
import { Alert } from '../parts/alert';
import { Time } from '../parts/format';
import { Pager, useListState } from '../parts/pager';
import { href } from '../route';
import { JobForm } from './settings-forms';

const PAGE_SIZE = 25;

type Job = JobsQuery['jobs']['nodes'][number];

const FILTERS = ['name', 'status'] as const;

export function JobsPage() {
  const may = useMay();
  const list = useListState(FILTERS, PAGE_SIZE);
  const { name: prefix, status } = list.values;
  const filter: JobFilter = { ...(prefix.trim() && { namePrefix: prefix.trim() }), ...((status === 'ENABLED' || status === 'PAUSED') && { status: status as JobStatus }) };
  const { data, error, loading } = useQuery(Jobs, { filter, first: PAGE_SIZE, after: list.after });
  const page = data?.jobs;
  return (
    <section aria-labelledby="jobs-title">
      <h1 id="jobs-title">Jobs</h1>
      {may('Mutation', 'createJob') && <JobForm />}
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Name starts with
          <input type="search" value={prefix} onChange={(e) => list.set('name', e.target.value)} />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => list.set('status', e.target.value)}>
            <option value="">Any</option>
            <option value="ENABLED">Enabled</option>
            <option value="PAUSED">Paused</option>
          </select>
        </label>
      </form>
      {error && <Alert>{error.message}</Alert>}
      <div className="table jobs" role="table" aria-label="Jobs">
        <div className="thead" role="row">
          <span role="columnheader">Job</span>
          <span role="columnheader">Schedule</span>
          <span role="columnheader">Next firing</span>
          <span role="columnheader">Last instances</span>
          <span role="columnheader">Actions</span>
        </div>
        {page?.nodes.map((job) => <JobRow key={job.name} job={job} />)}
      </div>
      <Pager state={list} size={PAGE_SIZE} total={page?.totalCount} hasNext={page?.pageInfo.hasNextPage ?? false} label="jobs" loading={loading} />
    </section>
  );
}

function JobRow({ job: initial }: { job: Job }) {
  const [job, setJob] = useState(initial);
  useEffect(() => setJob(initial), [initial]);
  useSubscription(InstanceChanged, { jobName: initial.name }, ({ jobInstanceChanged: changed }) => {
    if (!changed) return;
    setJob((j) => {
      const others = j.recentInstances.filter((i) => i.id !== changed.id);
      return { ...j, recentInstances: [changed, ...others].sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime)).slice(0, 5) };
    });
  });
  return (
    <div className="tr" role="row" data-job={job.name}>
      <span role="cell" className="name">
        <a href={href('jobs', job.name)}>{job.name}</a>
        <small className="muted">{job.target.kind === 'HTTP' ? job.target.http?.url : `task in ${job.target.task?.queue}`}</small>
      </span>
      <span role="cell" data-label="Schedule">
        <code>{job.schedule}</code> <span className="muted">{job.timeZone}</span>
      </span>
      <span role="cell" data-label="Next firing">
        {job.status === 'PAUSED' ? <span className="status status-paused">paused</span> : <Time at={job.nextRunTime} zone={job.timeZone} />}
      </span>
      <span role="cell" data-label="Last instances" className="dots">
        {job.recentInstances.length === 0 && <span className="muted">none yet</span>}
        {job.recentInstances.map((i) => (
          <span key={i.id} className={`dot status-${i.status.toLowerCase()}`} title={`${i.status} ${i.trigger} ${i.scheduledTime}`} data-instance-status={i.status}>
            <span className="sr-only">
              {i.status} {i.trigger}
            </span>
          </span>
        ))}
      </span>
      <span role="cell" data-label="Actions">
        <JobActions job={job} onChanged={(c) => setJob((j) => ({ ...j, ...c }))} />
      </span>
    </div>
  );
}

export function JobActions({ job, onChanged }: { job: Pick<Job, 'name' | 'status'>; onChanged(c: Partial<Pick<Job, 'status' | 'nextRunTime'>>): void }) {
  const may = useMay();
  const run = useMutation(RunJob);
  const pause = useMutation(PauseJob);
  const resume = useMutation(ResumeJob);
  const name = job.name;
  const error = run.error ?? pause.error ?? resume.error;
  const buttons = [
    may('Mutation', 'runJob') && (
      <button key="run" type="button" onClick={() => void run.run({ name })}>
        Run now
      </button>
    ),
    job.status === 'PAUSED'
      ? may('Mutation', 'resumeJob') && (
          <button key="resume" type="button" onClick={async () => onChanged((await resume.run({ name }))?.resumeJob ?? {})}>
            Resume
          </button>
        )
      : may('Mutation', 'pauseJob') && (
          <button key="pause" type="button" onClick={async () => onChanged((await pause.run({ name }))?.pauseJob ?? {})}>
            Pause
          </button>
        ),
  ].filter(Boolean);
  return (
    <div className="actions">
      {buttons.length ? buttons : <span className="muted">read only</span>}
      {error && <Alert onClose={() => [run, pause, resume].forEach((m) => m.clear())}>{error.message}</Alert>}
    </div>
  );
}

