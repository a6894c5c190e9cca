import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { consoleClient, GatewayError, type ConsoleClient } from './api/client';
import { asGatewayError, SessionContext, type Session } from './api/hooks';
import { Viewer } from './api/operations';
import { href, useRoute, type Route } from './route';
import { Home } from './pages/home';
import { QueuesPage } from './pages/queues';
import { QueuePage } from './pages/queue';
import { JobsPage } from './pages/jobs';
import { JobPage } from './pages/job';
import { NotificationsPage, RequestPage } from './pages/notifications';
import { Alert } from './parts/alert';
import { PageBoundary } from './parts/boundary';

// The console: asks for an API key when the gateway wants one (kept for this browser tab only), learns from
// `viewer` what the key may run, and shows only the pages and actions it allows.

const KEY_STORE = 'gateway-console-key';

type Boot = { state: 'checking' } | { state: 'sign-in'; reason?: string } | { state: 'ready'; session: Session };

export function App() {
  const [boot, setBoot] = useState<Boot>({ state: 'checking' });
  const clientRef = useRef<ConsoleClient | undefined>(undefined);

  const signIn = useCallback(async (key: string | null) => {
    clientRef.current?.close();
    const client = consoleClient(key);
    clientRef.current = client;
    try {
      const { viewer } = await client.request(Viewer, {});
      if (key) sessionStorage.setItem(KEY_STORE, key);
      const signOut = () => {
        sessionStorage.removeItem(KEY_STORE);
        client.close();
        setBoot({ state: 'sign-in' });
      };
      setBoot({
        state: 'ready',
        session: { client, allowed: new Set(viewer.allowedFields), keyName: viewer.keyName ?? null, scopes: viewer.scopes, authRequired: viewer.authRequired, signOut },
      });
      return null;
    } catch (error) {
      client.close();
      const refused = asGatewayError(error);
      if (refused.status === 401) sessionStorage.removeItem(KEY_STORE);
      setBoot({ state: 'sign-in', ...(key && { reason: refused.message }) });
      return refused;
    }
  }, []);

  useEffect(() => {
    void signIn(sessionStorage.getItem(KEY_STORE));
  }, [signIn]);

  if (boot.state === 'checking') return <p className="boot">Connecting to the gateway…</p>;
  if (boot.state === 'sign-in') return <SignIn reason={boot.reason} onKey={signIn} />;
  return (
    <SessionContext.Provider value={boot.session}>
      <Shell session={boot.session} />
    </SessionContext.Provider>
  );
}

function SignIn({ reason, onKey }: { reason: string | undefined; onKey: (key: string) => Promise<GatewayError | null> }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(reason);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    const refused = await onKey(key.trim());
    setBusy(false);
    if (refused) setError(refused.message);
  };
  return (
    <main className="sign-in">
      <h1>Gateway console</h1>
      <form onSubmit={submit}>
        <label htmlFor="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autoComplete="off" autoFocus required value={key} onChange={(e) => setKey(e.target.value)} placeholder="gw_…" />
        <button type="submit" disabled={busy || !key.trim()}>
          Open the console
        </button>
        <p className="hint">The key stays in this browser tab only. The console shows what its scopes allow.</p>
        {error && <Alert>{error}</Alert>}
      </form>
    </main>
  );
}

interface NavItem {
  page: Route['page'];
  label: string;
  target: string;
  /** The query the page needs. */
  needs: string | null;
  also?: Route['page'][];
}

const NAV: NavItem[] = [
  { page: 'home', label: 'Home', target: '#/', needs: null },
  { page: 'queues', label: 'Queues', target: href('queues'), needs: 'Query.queues', also: ['queue'] },
  { page: 'jobs', label: 'Jobs', target: href('jobs'), needs: 'Query.jobs', also: ['job'] },
  { page: 'notifications', label: 'Notifications', target: href('notifications'), needs: 'Query.notifications', also: ['request'] },
];

function Shell({ session }: { session: Session }) {
  const route = useRoute();
  const items = useMemo(() => NAV.filter((item) => item.needs === null || session.allowed.has(item.needs)), [session.allowed]);
  const current = NAV.find((item) => item.page === route.page || item.also?.includes(route.page));
  const mayShow = !current || current.needs === null || session.allowed.has(current.needs);
  const main = useRef<HTMLElement>(null);
  // A new page: keyboard and screen-reader users land on its content.
  useEffect(() => main.current?.focus({ preventScroll: true }), [route.page]);
  return (
    <>
      <a className="skip" href="#main" onClick={(e) => (e.preventDefault(), main.current?.focus())}>
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Gateway console</span>
        <nav aria-label="Pages">
          {items.map((item) => (
            <a key={item.page} href={item.target} aria-current={current === item ? 'page' : undefined}>
              {item.label}
            </a>
          ))}
        </nav>
        <span className="who" title={session.scopes.join(' ')}>
          {session.authRequired ? (
            <>
              <span className="key-name">{session.keyName}</span>{' '}
              <button type="button" className="link" onClick={session.signOut}>
                Sign out
              </button>
            </>
          ) : (
            'No key needed (AUTH=off)'
          )}
        </span>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {!mayShow ? <Alert>This API key may not read this page (it lacks the scope of {current?.needs}).</Alert> : (
          <PageBoundary page={location.hash}>
            <Page route={route} />
          </PageBoundary>
        )}
      </main>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'home':
      return <Home />;
    case 'queues':
      return <QueuesPage />;
    case 'queue':
      return <QueuePage queue={route.queue} task={route.task} />;
    case 'jobs':
      return <JobsPage />;
    case 'job':
      return <JobPage job={route.job} />;
    case 'notifications':
      return <NotificationsPage />;
    case 'request':
      return <RequestPage incomingId={route.incomingId} />;
  }
}
