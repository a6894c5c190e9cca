import type { Plugin } from 'graphql-yoga';
import type { Readiness } from '../../runtime/readiness.js';

export interface HealthProbe {
  ready(): Promise<Readiness>;
}

/** `GET /healthz`: the process answers (liveness). `GET /readyz`: 200 when ready (src/runtime/readiness.ts), else 503. */
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
