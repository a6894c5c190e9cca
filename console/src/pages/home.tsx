import { useInterval, useMay, useQuery, useSession } from '../api/hooks';
import { Activity } from '../api/operations';
import { ActivityChart } from '../parts/chart';
import { Alert } from '../parts/alert';

/** How often the charts are read again: they count whole minutes. */
const REFRESH_MS = 15_000;

export function Home() {
  const may = useMay();
  const { via } = useSession();
  const shown = { tasks: may('Query', 'taskActivity'), jobs: may('Query', 'jobActivity'), deliveries: may('Query', 'deliveryActivity') };
  const nothing = !shown.tasks && !shown.jobs && !shown.deliveries;
  const { data, error, refetch } = useQuery(Activity, { minutes: 60, ...shown }, { skip: nothing });
  useInterval(refetch, REFRESH_MS);
  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title">At a glance</h1>
      <p className="muted">What ended in each minute of the last hour, from the gateway's own records.</p>
      {error && <Alert>{error.message}</Alert>}
      {nothing && <p>{via === 'token' ? 'Your sign-in' : 'This API key'} reads none of the tasks, jobs or notifications areas.</p>}
      <div className="charts">
        {shown.tasks && <ActivityChart title="Tasks per minute" series={data?.taskActivity ?? []} succeeded="succeeded" failed="failed" />}
        {shown.deliveries && <ActivityChart title="Deliveries per minute" series={data?.deliveryActivity ?? []} succeeded="delivered" failed="failed or expired" />}
        {shown.jobs && <ActivityChart title="Job runs per minute" series={data?.jobActivity ?? []} succeeded="succeeded" failed="failed" />}
      </div>
    </section>
  );
}
