import { useEffect, useState } from 'react';
import { useMay, useQuery, useSubscription } from '../api/hooks';
import { InstanceChanged, JobDetail } from '../api/operations';
import type { InstanceFieldsFragment, JobDetailQuery } from '../gql/graphql';
import { Alert } from '../parts/alert';
import { Status, Time } from '../parts/format';
import { Pager, useListState } from '../parts/pager';
import { href } from '../route';
import { JobActions } from './jobs';
import { JobForm } from './settings-forms';

const PAGE_SIZE = 20;

export function JobPage({ job: name }: { job: string }) {
  const list = useListState([], PAGE_SIZE);
  const may = useMay();
  const { data, error, loading, refetch } = useQuery(JobDetail, { name, first: PAGE_SIZE, after: list.after });
  // Instances that appeared live on the first page since it was read: the count below the rows includes them.
  const [added, setAdded] = useState(0);
  const [job, setJob] = useState<JobDetailQuery['job']>();
  const [instances, setInstances] = useState<InstanceFieldsFragment[]>([]);
  useEffect(() => {
    if (!data) return;
    setJob(data.job);
    setInstances(data.jobInstances.nodes);
    setAdded(0);
  }, [data]);
  // New instances appear on the first page, and every instance shown follows its status.
  const onFirstPage = list.page === 1;
  useSubscription(InstanceChanged, { jobName: name }, ({ jobInstanceChanged: changed }) => {
    if (!changed) return;
    const known = instances.some((i) => i.id === changed.id);
    setInstances((shown) => (shown.some((i) => i.id === changed.id) ? shown.map((i) => (i.id === changed.id ? changed : i)) : onFirstPage ? [changed, ...shown].slice(0, PAGE_SIZE) : shown));
    if (!known && onFirstPage) setAdded((n) => n + 1);
  });
  return (
    <section aria-labelledby="job-title">
      <p className="crumbs">
        <a href={href('jobs')}>Jobs</a> /
      </p>
      <h1 id="job-title">Job {name}</h1>
      {error && <Alert>{error.message}</Alert>}
      {job && (
        <>
          <dl className="facts">
            <dt>Schedule</dt>
            <dd>
              <code>{job.schedule}</code> in {job.timeZone}
            </dd>
            <dt>Next firing</dt>
            <dd>{job.status === 'PAUSED' ? <span className="status status-paused">paused</span> : <Time at={job.nextRunTime} zone={job.timeZone} />}</dd>
            <dt>Last run</dt>
            <dd>
              <Time at={job.lastRunTime} />
            </dd>
            <dt>Target</dt>
            <dd>{job.target.kind === 'HTTP' ? <code>{`${job.target.http?.httpMethod} ${job.target.http?.url}`}</code> : `a task in queue ${job.target.task?.queue}`}</dd>
            <dt>Retries</dt>
            <dd>
              {job.retryConfig.retryCount}, timeout {job.timeoutSeconds} s, misfire {job.misfirePolicy.toLowerCase().replace('_', ' ')}
            </dd>
            {job.description && (
              <>
                <dt>Description</dt>
                <dd>{job.description}</dd>
              </>
            )}
          </dl>
          <JobActions job={job} onChanged={(c) => setJob((j) => j && { ...j, ...c })} />
          {may('Mutation', 'updateJob') && <JobForm key={`${job.schedule} ${job.timeZone} ${job.description}`} job={job} onSaved={refetch} />}
        </>
      )}
      <h2>Instances</h2>
      <div className="table instances" role="table" aria-label={`Instances of ${name}`}>
        <div className="thead" role="row">
          <span role="columnheader">Scheduled</span>
          <span role="columnheader">Status</span>
          <span role="columnheader">Trigger</span>
          <span role="columnheader">Outcome</span>
        </div>
        {instances.map((i) => (
          <div className="tr" role="row" key={i.id} data-instance={i.id}>
            <span role="cell">
              <Time at={i.scheduledTime} />
            </span>
            <span role="cell" data-label="Status">
              <Status value={i.status} />
            </span>
            <span role="cell" data-label="Trigger">
              {i.trigger.toLowerCase()}
              {i.misfire && ` (${i.misfire.toLowerCase().replace('_', ' ')})`}
            </span>
            <span role="cell" data-label="Outcome" className="outcome">
              {i.error ?? (i.result ? JSON.stringify(i.result).slice(0, 160) : '')} {i.attempts > 1 && <span className="muted">{i.attempts} attempts</span>}
            </span>
          </div>
        ))}
      </div>
      <Pager state={list} size={PAGE_SIZE} total={data && data.jobInstances.totalCount + added} hasNext={(data?.jobInstances.pageInfo.hasNextPage ?? false) || (onFirstPage && instances.length === PAGE_SIZE && added > 0)} label="instances" loading={loading} />
    </section>
  );
}
