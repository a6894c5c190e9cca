import type { Plugin } from 'graphql-yoga';

export interface HealthProbe {
  /** Throws or resolves with details; the gateway is ready when it resolves with ok. */
  ready(): Promise<{ ok: boolean; checks: Record<string, unknown> }>;
}

/** `GET /healthz`: the process answers. `GET /readyz`: the database answers and every migration is applied. */
export function useHealth(probe: HealthProbe): Plugin {
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } });
  return {
    async onRequest({ url, endResponse }) {
      if (url.pathname === '/healthz') return endResponse(json(200, { status: 'ok' }));
      if (url.pathname === '/readyz') {
        try {
          const { ok, checks } = await probe.ready();
          return endResponse(json(ok ? 200 : 503, { status: ok ? 'ready' : 'not ready', checks }));
        } catch (error) {
          return endResponse(json(503, { status: 'not ready', checks: { database: (error as Error).message } }));
        }
      }
    },
  };
}
