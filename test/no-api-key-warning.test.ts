import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, revokeApiKey } from '../src/access/api-keys.js';
import { NO_API_KEY_WARNING } from '../src/access/no-key-warning.js';
import { startGateway, type Gateway } from '../src/app.js';
import { commandNamed, npmForm } from '../src/cli/commands.js';
import { loadConfig } from '../src/config.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';
import { NO_WORKERS, gql } from './helpers/gateway.js';

// AUTH=on over a database without a working API key refuses every request: the start says so once, at warn, with the
// command that creates one, and starts all the same. Restarts of one embedded database: no key, a key, the key revoked.

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase('pglite');
});
afterAll(async () => db?.drop());

/** Starts a gateway on the test's database with `env`, keeps every log line it writes, and closes it after `use`. */
async function withGateway(env: Record<string, string>, use: (gateway: Gateway) => Promise<void>): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...NO_WORKERS, ...db.env, ...env });
  const gateway = await startGateway(config, { log: pino({ level: 'info' }, sink) });
  try {
    await use(gateway);
  } finally {
    await gateway.close();
  }
  return lines;
}

const warnings = (lines: Record<string, unknown>[]) => lines.filter((l) => l.msg === NO_API_KEY_WARNING);

describe('AUTH=on and the API keys of the database', () => {
  let keyId: string;

  it('no key: one warning at start naming the command that creates one; the gateway starts and answers 401', async () => {
    const lines = await withGateway({ AUTH: 'on' }, async (gateway) => {
      expect((await fetch(`${gateway.url}/readyz`)).status).toBe(200);
      expect((await gql(gateway.url, '{ __typename }')).status).toBe(401);
      const { apiKey } = await createApiKey(gateway.services.db, { name: 'admin', scopes: ['admin:all'] });
      keyId = apiKey.id;
    });
    expect(warnings(lines)).toHaveLength(1);
    expect(warnings(lines)[0]!.level).toBe(40);
    expect(NO_API_KEY_WARNING).toContain(`\`${npmForm(commandNamed('keys create'))} --name`);
    expect(lines.find((l) => String(l.msg).startsWith('gateway listening'))).toBeDefined();
  });

  it('a key: no warning', async () => {
    const lines = await withGateway({ AUTH: 'on' }, async () => undefined);
    expect(lines.find((l) => String(l.msg).startsWith('gateway listening'))).toBeDefined();
    expect(warnings(lines)).toEqual([]);
  });

  it('only revoked keys: the warning again', async () => {
    const revoke = await withGateway({ AUTH: 'off' }, async (gateway) => {
      await revokeApiKey(gateway.services.db, keyId);
    });
    expect(warnings(revoke), 'AUTH=off never says it').toEqual([]);
    expect(warnings(await withGateway({ AUTH: 'on' }, async () => undefined))).toHaveLength(1);
  });

  it('with an OpenID provider, tokens may be the only callers: no warning', async () => {
    const lines = await withGateway({ AUTH: 'on', OIDC_ISSUER: 'http://127.0.0.1:9/', OIDC_AUDIENCE: 'https://gateway.test/api' }, async () => undefined);
    expect(warnings(lines)).toEqual([]);
  });
});
