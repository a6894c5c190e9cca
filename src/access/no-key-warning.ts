import type { Config } from '../config.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../log.js';

// AUTH=on over a database without a key that works, and no OpenID provider whose tokens would do instead: the gateway
// starts and refuses every request with 401. Said once at start, at warn, with the command that creates a key; the
// start goes on (a key created meanwhile works at once, and readiness is not about callers).

export const NO_API_KEY_WARNING =
  'AUTH=on and the database holds no API key that works (none created, or all revoked): every request is refused (401) until one exists. ' +
  'Create one with `npm run keys -- create --name admin --scopes admin:all` (with the embedded database, while the gateway is stopped; docs/security.md, Keys).';

/** Logs NO_API_KEY_WARNING when it applies; a failed look-up is only a debug line, never a failed start. */
export async function warnWhenNoApiKey(db: PrismaClient, config: Pick<Config, 'AUTH' | 'OIDC_ISSUER'>, log: Logger): Promise<void> {
  if (config.AUTH !== 'on' || config.OIDC_ISSUER) return;
  try {
    if (await db.apiKey.findFirst({ where: { revokedAt: null }, select: { id: true } })) return;
    log.warn({ auth: config.AUTH }, NO_API_KEY_WARNING);
  } catch (error) {
    log.debug({ err: error }, 'looking for an API key at start failed');
  }
}
