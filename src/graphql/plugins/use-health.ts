import type { Plugin } from 'graphql-yoga';

export interface Readiness {
  ok: boolean;
  /** The names of the checks that fail ("database", "listener", "worker:cron", ...): names only, no internals. */
  failing: string[];
  checks: Record<string, unknown>;
}

export interface HealthProbe {
  ready(): Promise<Readiness>;
}

/**
 * `GET /healthz`: the process answers (liveness). `GET /readyz`: 200 when the database answers, every migration is
 * applied, the event listener is connected and no worker is backing off; else 503 naming the failing checks. Both are
 * public, so they carry names and states only: never a host, port, driver message or stack.
 */
export function useHealth(probe: HealthProbe): Plugin {
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } });
  return {
    async onRequest({ url, endResponse }) {
      if (url.pathname === '/healthz') return endResponse(json(200, { status: 'ok' }));
      if (url.pathname === '/readyz') {
        let readiness: Readiness;
        try {
          readiness = await probe.ready();
        } catch {
          readiness = { ok: false, failing: ['readiness'], checks: {} };
        }
        const { ok, failing, checks } = readiness;
        return endResponse(json(ok ? 200 : 503, { status: ok ? 'ready' : 'not ready', failing, checks }));
      }
    },
  };
}
