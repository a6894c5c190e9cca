import { rmSync } from 'node:fs';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startGateway } from '../src/app.js';
import { runScratchDir } from './helpers/databases.js';

describe('embedded database on disk', () => {
  const dir = runScratchDir('gw-lock-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps data across restarts and refuses a second process on the same directory', async () => {
    const config = loadConfig({ PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'silent' });
    const first = await startGateway(config, { log: pino({ level: 'silent' }) });
    const created = await fetch(`${first.url}/createQueue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'createQueue', params: { name: 'kept' }, id: 1 }) });
    expect((await created.json()).result.name).toBe('kept');
    await expect(startGateway(config, { log: pino({ level: 'silent' }) })).rejects.toThrow(/in use by process \d+.*DATABASE_URL/s);
    await first.close();

    const second = await startGateway(config, { log: pino({ level: 'silent' }) });
    const got = await fetch(`${second.url}/getQueue`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'getQueue', params: { name: 'kept' }, id: 1 }) });
    expect((await got.json()).result.name).toBe('kept');
    await second.close();
  });
});
