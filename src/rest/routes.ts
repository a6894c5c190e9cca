import type { Config } from '../config.js';
import { queueRoutes } from './queues.routes.js';
import { schedulerRoutes } from './scheduler.routes.js';
import { taskRoutes } from './tasks.routes.js';
import { methodOf, type RpcRoute } from './route.js';

/** Every legacy JSON-RPC path of the spec; each area adds its table here. */
export function allRpcRoutes(config: Config): RpcRoute[] {
  const routes = [...queueRoutes(config), ...taskRoutes(), ...schedulerRoutes(config)];
  const seen = new Set<string>();
  for (const r of routes) {
    if (seen.has(r.path)) throw new Error(`two legacy routes claim ${r.path}`);
    seen.add(methodOf(r));
  }
  return routes;
}
