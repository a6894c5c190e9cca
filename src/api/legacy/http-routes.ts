import type { Config } from '../../config.js';
import type { HttpRoute } from './http-route.js';
import { identityRoutes } from './identity.routes.js';
import { signatureRoutes } from './signatures.routes.js';
import { notificationRoutes } from './notifications.routes.js';
import { stubRoutes } from './stubs.routes.js';
import { assertUniqueRoutes } from './routes.js';

/** Every legacy REST (non JSON-RPC) path of the spec; each area adds its table here. */
export function allHttpRoutes(config: Config): HttpRoute[] {
  return assertUniqueRoutes([...identityRoutes(config), ...signatureRoutes(config), ...notificationRoutes(), ...stubRoutes(config)], (r) => `${r.method} ${r.path}`);
}
