import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTER_CHANNELS, CHANNEL_REGISTRY, closeChannels, deliver, hasAdapter, parseChannelConfig } from '../../src/channels/index.js';
import { startSink, type Sink } from './sink.js';
import { LOOPBACK } from './sink.js';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink();
});
afterAll(async () => {
  await sink.close();
  await closeChannels();
});

describe('channel registry', () => {
  it('has one adapter per sending channel except general, each declaring its own channel', () => {
    expect([...ADAPTER_CHANNELS].sort()).toEqual(['chatA', 'chatB', 'email', 'gaps', 'push', 'sms', 'webhook']);
    for (const channel of ADAPTER_CHANNELS) expect(CHANNEL_REGISTRY[channel].adapter.channel).toBe(channel);
    expect(hasAdapter('general')).toBe(false);
    expect(hasAdapter('toString')).toBe(false);
  });

  it('validates stored settings with a fix-it message', () => {
    const bad = parseChannelConfig('email', { host: '', from: 'not-an-address' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.message).toMatch(/^invalid email settings: host: .*; from: /);
    const good = parseChannelConfig('chatB', { webhookUrl: 'https://chat.example.org/hooks/abc' });
    expect(good).toEqual({ ok: true, config: { webhookUrl: 'https://chat.example.org/hooks/abc', timeoutSeconds: 30 } });
  });

  it('deliver() parses raw settings and runs the adapter; invalid settings are permanent', async () => {
    expect(await deliver('webhook', { url: `${sink.url}/x`, body: { a: 1 } }, {}, LOOPBACK)).toEqual({ kind: 'delivered', detail: 'HTTP 200' });
    expect(sink.requests).toHaveLength(1);
    expect(await deliver('chatA', { content: 'x', chatId: '1' }, { botToken: 'missing-colon' }, LOOPBACK)).toMatchObject({
      kind: 'permanent',
      reason: expect.stringContaining('botToken'),
    });
    expect(sink.requests).toHaveLength(1);
  });
});
