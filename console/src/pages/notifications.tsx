import { useEffect, useState } from 'react';
import { useMay, useMutation, useQuery, useSubscription } from '../api/hooks';
import { RequestChanged, ResendNotification, Stubs, Units } from '../api/operations';
import type { UnitFieldsFragment } from '../gql/graphql';
import { Alert } from '../parts/alert';
import { CHANNELS, NOTIFICATION_STATUSES, Status, Time } from '../parts/format';
import { Pager, useListState } from '../parts/pager';
import { href } from '../route';

const PAGE_SIZE = 50;

type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];
type Channel = (typeof CHANNELS)[number];

const FILTERS = ['system', 'status', 'channel'] as const;

export function NotificationsPage() {
  const may = useMay();
  const list = useListState(FILTERS, PAGE_SIZE);
  const { system: systemId, status, channel } = list.values;
  const filter = {
    ...(systemId.trim() && { systemId: systemId.trim() }),
    ...(status && { status: status as NotificationStatus }),
    ...(channel && { channel: channel as Channel }),
  };
  const { data, error, loading, refetch } = useQuery(Units, { filter, first: PAGE_SIZE, after: list.after });
  const page = data?.notifications;
  // A page lists units newest request first, a request's units together: shown grouped by request.
  const requests: { incomingId: string; units: UnitFieldsFragment[] }[] = [];
  for (const unit of page?.nodes ?? []) {
    const last = requests.at(-1);
    if (last?.incomingId === unit.incomingId) last.units.push(unit);
    else requests.push({ incomingId: unit.incomingId, units: [unit] });
  }
  return (
    <section aria-labelledby="notifications-title">
      <h1 id="notifications-title">Notifications</h1>
      <h2>Requests</h2>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          System
          <input type="search" value={systemId} onChange={(e) => list.set('system', e.target.value)} />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => list.set('status', e.target.value)}>
            <option value="">Any</option>
            {NOTIFICATION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
        <label>
          Channel
          <select value={channel} onChange={(e) => list.set('channel', e.target.value)}>
            <option value="">Any</option>
            {CHANNELS.map((c) => (
              <option key={c} value={c}>
                {c.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </form>
      {error && <Alert>{error.message}</Alert>}
      <div className="requests">
        {requests.map((request) => (
          <article key={request.incomingId} className="request" data-request={request.incomingId}>
            <h3>
              <a href={href('notifications', request.incomingId)}>Request {request.incomingId.slice(0, 8)}</a> <span className="muted">{request.units[0]!.systemId}</span>{' '}
              <span className="muted">{request.units[0]!.channel.toLowerCase()}</span> <Time at={request.units[0]!.createTime} />{' '}
              <span className="muted unit-count">{request.units.length === 1 ? '1 unit' : `${request.units.length} units`}</span>
            </h3>
            <UnitList units={request.units} onResent={refetch} />
          </article>
        ))}
      </div>
      <Pager state={list} size={PAGE_SIZE} total={page?.totalCount} hasNext={page?.pageInfo.hasNextPage ?? false} label="units" loading={loading} />
      {may('Query', 'stubNotifications') && <StubsSection />}
    </section>
  );
}

/** Units with their status, attempts and last error; a FAILED one offers its resend to a caller allowed it. */
export function UnitList({ units, onResent }: { units: UnitFieldsFragment[]; onResent?(unit: UnitFieldsFragment): void }) {
  const may = useMay();
  const resend = useMutation(ResendNotification);
  return (
    <>
      {resend.error && <Alert>{resend.error.message}</Alert>}
      <ul className="units">
        {units.map((u) => (
          <li key={u.id} data-unit={u.id}>
            <Status value={u.status} /> <span className="recipient">{u.recipient}</span>{' '}
            <span className="muted">
              {u.attempts}/{u.maxAttempts} attempts
            </span>
            {u.deliveredTime && (
              <>
                {' '}
                delivered <Time at={u.deliveredTime} />
              </>
            )}
            {u.status === 'FAILED' && may('Mutation', 'resendNotification') && (
              <>
                {' '}
                <button
                  type="button"
                  className="small"
                  disabled={resend.busy}
                  onClick={async () => {
                    const answer = await resend.run({ id: u.id });
                    if (answer) onResent?.(answer.resendNotification);
                  }}
                >
                  Resend
                </button>
              </>
            )}
            {u.lastError && <small className="error-text">{u.lastError}</small>}
          </li>
        ))}
      </ul>
    </>
  );
}

export function RequestPage({ incomingId }: { incomingId: string }) {
  const { data, error } = useQuery(Units, { filter: { incomingId }, first: 500, after: null });
  const [units, setUnits] = useState<UnitFieldsFragment[]>([]);
  useEffect(() => setUnits(data?.notifications.nodes ?? []), [data]);
  useSubscription(RequestChanged, { incomingId }, ({ notificationStatusChanged }) => setUnits(notificationStatusChanged));
  return (
    <section aria-labelledby="request-title">
      <p className="crumbs">
        <a href={href('notifications')}>Notifications</a> /
      </p>
      <h1 id="request-title">Request {incomingId}</h1>
      {error && <Alert>{error.message}</Alert>}
      {units[0] && (
        <p>
          System {units[0].systemId}, channel {units[0].channel.toLowerCase()}, accepted <Time at={units[0].createTime} />, {units.length} units.
        </p>
      )}
      <UnitList units={units} onResent={(resent) => setUnits((all) => all.map((u) => (u.id === resent.id ? resent : u)))} />
    </section>
  );
}

/** Stored notifications of one type (the stub paths' view), by status. */
function StubsSection() {
  const [type, setType] = useState('general');
  const [status, setStatus] = useState('');
  const [pageNumber, setPageNumber] = useState(0);
  const size = 25;
  const { data, error } = useQuery(Stubs, { type: type.trim() || 'general', ...(status && { status: status as NotificationStatus }), pageNumber, pageSize: size });
  const page = data?.stubNotifications;
  return (
    <>
      <h2>Stubs</h2>
      <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Type
          <input type="search" value={type} onChange={(e) => (setType(e.target.value), setPageNumber(0))} />
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => (setStatus(e.target.value), setPageNumber(0))}>
            <option value="">Any</option>
            {NOTIFICATION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </form>
      {error && <Alert>{error.message}</Alert>}
      <ul className="units">
        {page?.content.map((n) => (
          <li key={n.id}>
            <Status value={n.status} /> <span className="recipient">{n.recipient}</span> <span className="muted">{n.systemId}</span> <Time at={n.updateTime} />
          </li>
        ))}
      </ul>
      <nav className="pager" aria-label="Stub pages">
        <button type="button" disabled={pageNumber === 0} onClick={() => setPageNumber((n) => n - 1)}>
          ← Previous
        </button>
        <span>{page ? `${page.totalElements.toLocaleString('en')} stubs, page ${page.currentPage + 1} of ${Math.max(1, page.totalPages)}` : '…'}</span>
        <button type="button" disabled={!page || pageNumber + 1 >= page.totalPages} onClick={() => setPageNumber((n) => n + 1)}>
          Next →
        </button>
      </nav>
    </>
  );
}
