import { createApiKey } from '../../src/access/api-keys.js';
import type { TestGateway } from './gateway.js';

/** Creates a key straight in the gateway's database (as `npm run keys -- create` does) and returns it. */
export async function makeKey(t: TestGateway, scopes: string[], systemId?: string): Promise<string> {
  const { key } = await createApiKey(t.gateway.services.db, { name: `test ${scopes.join(',')}`, scopes, ...(systemId && { systemId }) });
  return key;
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
