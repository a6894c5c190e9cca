import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { consoleClient, GatewayError, type ConsoleClient } from './api/client';
import { asGatewayError, SessionContext, type Session } from './api/hooks';
import { Viewer } from './api/operations';
import { isSignInReturn, loadProvider, type Provider } from './api/settings';
import { href, useRoute, type Route } from './route';
import { Home } from './pages/home';
import { QueuesPage } from './pages/queues';
import { QueuePage } from './pages/queue';
import { JobsPage } from './pages/jobs';
import { JobPage } from './pages/job';
import { NotificationsPage, RequestPage } from './pages/notifications';
import { FailuresPage } from './pages/failures';
import { Alert } from './parts/alert';
import { PageBoundary } from './parts/boundary';

// The console: when the gateway wants a caller, asks for an API key (kept for this browser tab only) or, when the
// gateway names an OpenID provider (CONSOLE_OIDC_CLIENT_ID), signs the operator in there (the token in memory only);
// learns from `viewer` what the key or token may run, and shows only the pages and actions it allows.

const KEY_STORE = 'gateway-console-key';

/** What the console calls the gateway with: an API key, or a provider's access token (with the person's name). */
type Credential = { kind: 'key'; key: string } | { kind: 'token'; token: string; name: string; expiresAt: number | null };

type Boot = { state: 'checking' } | { state: 'sign-in'; reason?: string } | { state: 'ready'; session: Session; expiresAt: number | null };

const signInModule = () => import('./api/sign-in');

export function App() {
  const [boot, setBoot] = useState<Boot>({ state: 'checking' });
  const [provider, setProvider] = useState<Provider | null>(null);
  const clientRef = useRef<ConsoleClient | undefined>(undefined);

  const open = useCallback(async (credential: Credential | null) => {
    clientRef.current?.close();
    const client = consoleClient(credential && (credential.kind === 'key' ? credential.key : credential.token));
    clientRef.current = client;
    try {
      const { viewer } = await client.request(Viewer, {});
      if (credential?.kind === 'key') sessionStorage.setItem(KEY_STORE, credential.key);
      const signOut = (reason?: string) => {
        sessionStorage.removeItem(KEY_STORE);
        client.close();
        setBoot({ state: 'sign-in', ...(reason && { reason }) });
      };
      setBoot({
        state: 'ready',
        expiresAt: credential?.kind === 'token' ? credential.expiresAt : null,
        session: {
          client,
          allowed: new Set(viewer.allowedFields),
          via: credential?.kind ?? null,
          // A person signed in at the provider by name; a key by its name.
          who: credential?.kind === 'token' ? credential.name : (viewer.keyName ?? null),
          scopes: viewer.scopes,
          authRequired: viewer.authRequired,
          signOut,
        },
      });
      return null;
    } catch (error) {
      client.close();
      const refused = asGatewayError(error);
      if (refused.status === 401) sessionStorage.removeItem(KEY_STORE);
      setBoot({ state: 'sign-in', ...(credential && { reason: refused.message }) });
      return refused;
    }
  }, []);

  useEffect(() => {
    void (async () => {
      const found = await loadProvider();
      setProvider(found);
      if (!found || !isSignInReturn()) {
        const stored = sessionStorage.getItem(KEY_STORE);
        return open(stored === null ? null : { kind: 'key', key: stored });
      }
      try {
        const session = await (await signInModule()).finishSignIn(found);
        return open({ kind: 'token', token: session.accessToken, name: session.name, expiresAt: session.expiresAt });
      } catch (error) {
        setBoot({ state: 'sign-in', reason: error instanceof Error ? error.message : String(error) });
      }
    })();
  }, [open]);

  // No refresh token: when the access token runs out the operator signs in again (without a password while the
  // provider's session lasts), rather than meeting refusals page by page.
  const expiresAt = boot.state === 'ready' ? boot.expiresAt : null;
  const session = boot.state === 'ready' ? boot.session : null;
  useEffect(() => {
    if (expiresAt === null || !session) return;
    // setTimeout takes at most 2^31-1 ms (about 24 days); a longer wait would fire at once.
    const timer = setTimeout(() => session.signOut(`The sign-in at ${provider?.name ?? 'the provider'} expired: sign in again.`), Math.min(Math.max(0, expiresAt - Date.now()), 2 ** 31 - 1));
    return () => clearTimeout(timer);
  }, [expiresAt, session, provider]);

  if (boot.state === 'checking') return <p className="boot">Connecting to the gateway…</p>;
  if (boot.state === 'sign-in') return <SignIn reason={boot.reason} provider={provider} onKey={(key) => open({ kind: 'key', key })} />;
  return (
    <SessionContext.Provider value={boot.session}>
      <Shell session={boot.session} />
    </SessionContext.Provider>
  );
}

function SignIn({ reason, provider, onKey }: { reason: string | undefined; provider: Provider | null; onKey: (key: string) => Promise<GatewayError | null> }) {
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
  const leave = async () => {
    if (!provider) return;
    setBusy(true);
    setError(undefined);
    try {
      await (await signInModule()).startSignIn(provider);
    } catch (failed) {
      // The provider cannot be reached (its discovery document): nothing was left, the key form still works.
      setError(`${provider.name} cannot be reached: ${failed instanceof Error ? failed.message : String(failed)}`);
      setBusy(false);
    }
  };
  return (
    <main className="sign-in">
      <h1>Gateway console</h1>
      {provider && (
        <div className="provider">
          <button type="button" onClick={() => void leave()} disabled={busy}>
            Sign in with {provider.name}
          </button>
          <p className="hint">The console shows what your sign-in allows. Or use an API key:</p>
        </div>
      )}
      <form onSubmit={submit}>
        <label htmlFor="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autoComplete="off" autoFocus={!provider} required value={key} onChange={(e) => setKey(e.target.value)} placeholder="gw_…" />
        <button type="submit" disabled={busy || !key.trim()}>
          Open the console
        </button>
        <p className="hint">The key stays in this browser tab only. The console shows what its scopes allow.</p>
      </form>
      {error && <Alert>{error}</Alert>}
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
  { page: 'failures', label: 'Failures', target: href('failures'), needs: 'Query.tasks' },
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
              <span className="key-name">{session.who}</span>{' '}
              <button type="button" className="link" onClick={() => session.signOut()}>
                Sign out
              </button>
            </>
          ) : (
            'No key needed (AUTH=off)'
          )}
        </span>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        {!mayShow ? <Alert>{session.via === 'token' ? 'Your sign-in' : 'This API key'} may not read this page (it lacks the scope of {current?.needs}).</Alert> : (
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
      // Keyed: another queue's page starts afresh (its rate box, its filters), never from the last queue's state.
      return <QueuePage key={route.queue} queue={route.queue} task={route.task} />;
    case 'jobs':
      return <JobsPage />;
    case 'job':
      return <JobPage key={route.job} job={route.job} />;
    case 'notifications':
      return <NotificationsPage />;
    case 'request':
      return <RequestPage key={route.incomingId} incomingId={route.incomingId} />;
    case 'failures':
      return <FailuresPage />;
  }
}
