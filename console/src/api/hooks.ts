import { createContext, useCallback, useContext, useEffect, useRef, useState } from 'react';
import { GatewayError, type ConsoleClient, type Document } from './client';

// React's side of the client: a query read when its variables change (and again on `refetch`), a subscription
// held while a component shows it, and the caller's permissions.

export interface Session {
  client: ConsoleClient;
  /** Root fields the key or token may run (`Mutation.pauseQueue`), from `viewer`. */
  allowed: ReadonlySet<string>;
  /** How the operator signed in: an API key, a provider's token, or neither (AUTH=off). */
  via: 'key' | 'token' | null;
  /** The key's name, or the name of the person signed in at the provider. */
  who: string | null;
  scopes: readonly string[];
  authRequired: boolean;
  /** Back to the sign-in page, with `reason` shown there. */
  signOut(reason?: string): void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in console');
  return session;
}

/** Whether the caller may run a root field, e.g. may('Mutation', 'pauseQueue'). */
export function useMay(): (type: 'Query' | 'Mutation' | 'Subscription', field: string) => boolean {
  const { allowed } = useSession();
  return useCallback((type, field) => allowed.has(`${type}.${field}`), [allowed]);
}

export interface QueryState<R> {
  data: R | undefined;
  error: GatewayError | undefined;
  loading: boolean;
  refetch(): void;
}

/** Reads `document` now and whenever `variables` change (compared as JSON); `skip` reads nothing. */
export function useQuery<R, V>(document: Document<R, V>, variables: V, { skip = false } = {}): QueryState<R> {
  const { client } = useSession();
  const [state, setState] = useState<{ data?: R; error?: GatewayError; loading: boolean }>({ loading: !skip });
  const [round, setRound] = useState(0);
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (skip) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    client.request(document, JSON.parse(key) as V).then(
      (data) => live && setState({ data, loading: false }),
      (error: unknown) => live && setState((s) => ({ data: s.data, error: asGatewayError(error), loading: false })),
    );
    return () => {
      live = false;
    };
  }, [client, document, key, round, skip]);
  const refetch = useCallback(() => setRound((r) => r + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, refetch };
}

/** Follows `document` while mounted (and `enabled`); new `variables` or a new `round` start a new subscription. */
export function useSubscription<R, V>(document: Document<R, V>, variables: V, onData: (data: R) => void, { enabled = true, round = 0 } = {}): GatewayError | undefined {
  const { client } = useSession();
  const latest = useRef(onData);
  latest.current = onData;
  const [error, setError] = useState<GatewayError>();
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (!enabled) return;
    setError(undefined);
    return client.subscribe(document, JSON.parse(key) as V, (data) => latest.current(data), setError);
  }, [client, document, key, enabled, round]);
  return error;
}

/** Runs a mutation; `error` holds the gateway's reason for the last refusal until the next run. */
export function useMutation<R, V>(document: Document<R, V>): { run(variables: V): Promise<R | undefined>; error: GatewayError | undefined; busy: boolean; clear(): void } {
  const { client } = useSession();
  const [error, setError] = useState<GatewayError>();
  const [busy, setBusy] = useState(false);
  const run = useCallback(
    async (variables: V) => {
      setBusy(true);
      setError(undefined);
      try {
        return await client.request(document, variables);
      } catch (failed) {
        setError(asGatewayError(failed));
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [client, document],
  );
  return { run, error, busy, clear: useCallback(() => setError(undefined), []) };
}

export function asGatewayError(error: unknown): GatewayError {
  return error instanceof GatewayError ? error : new GatewayError(error instanceof Error ? error.message : String(error), undefined, 0);
}

/** Calls `run` every `ms` while mounted. */
export function useInterval(run: () => void, ms: number): void {
  const latest = useRef(run);
  latest.current = run;
  useEffect(() => {
    const timer = setInterval(() => latest.current(), ms);
    return () => clearInterval(timer);
  }, [ms]);
}
