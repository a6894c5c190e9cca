import type { Config } from '../../config.js';
import { queueRoutes } from './queues.routes.js';
import { schedulerRoutes } from './scheduler.routes.js';
import { taskRoutes } from './tasks.routes.js';
import type { RpcRoute } from './route.js';

/** Throws when two routes claim the same key (a path, or a method and path): the second would never be reached. */
export function assertUniqueRoutes<R>(routes: R[], keyOf: (route: R) => string): R[] {
  const seen = new Set<string>();
  for (const route of routes) {
    const key = keyOf(route);
    if (seen.has(key)) throw new Error(`two legacy routes claim ${key}`);
    seen.add(key);
  }
  return routes;
}

/** Every legacy JSON-RPC path of the spec; each area adds its table here. */
export function allRpcRoutes(config: Config): RpcRoute[] {
  return assertUniqueRoutes([...queueRoutes(config), ...taskRoutes(config), ...schedulerRoutes(config)], (r) => r.path);
}
