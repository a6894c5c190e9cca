import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyHttpResponse, parseRetryAfter, performHttp } from '../../src/channels/http.js';
import { LOOPBACK, startSink, type Sink } from './sink.js';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink();
});
afterAll(() => sink.close());

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP-dates', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('classifyHttpResponse', () => {
  const res = (status: number, headers: Record<string, string> = {}) => ({ status, headers, text: 'x' });
  it.each([200, 201, 204])('%i delivered', (s) => expect(classifyHttpResponse(res(s)).kind).toBe('delivered'));
  it.each([408, 429, 500, 502, 503, 504])('%i retryable', (s) => expect(classifyHttpResponse(res(s)).kind).toBe('retryable'));
  it.each([301, 400, 401, 403, 404, 410, 413, 422])('%i permanent', (s) => expect(classifyHttpResponse(res(s)).kind).toBe('permanent'));
  it('honours Retry-After on 503', () => {
    expect(classifyHttpResponse(res(503, { 'retry-after': '7' }))).toEqual({ kind: 'retryable', reason: 'HTTP 503: x', retryAfterMs: 7000 });
  });
});

describe('performHttp', () => {
  it('connection refused is retryable', async () => {
    const closed = await startSink();
    const url = closed.url;
    await closed.close();
    const attempt = await performHttp({ url, method: 'POST', body: '{}' }, LOOPBACK);
    expect(attempt.ok).toBe(false);
    if (!attempt.ok) expect(attempt.outcome).toMatchObject({ kind: 'retryable', reason: expect.stringContaining('ECONNREFUSED') });
  });
  it('bad URL or scheme is permanent', async () => {
    for (const url of ['not a url', 'ftp://127.0.0.1/x']) {
      const attempt = await performHttp({ url, method: 'GET' }, LOOPBACK);
      expect(attempt.ok ? 'ok' : attempt.outcome.kind).toBe('permanent');
    }
  });
  it('caller abort is retryable', async () => {
    sink.reply({ status: 200, delayMs: 2000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('shutdown')), 50); // the caller gives up while the peer still waits: the scenario itself
    const attempt = await performHttp({ url: sink.url, method: 'GET' }, { ...LOOPBACK, signal: controller.signal });
    expect(attempt.ok ? 'ok' : attempt.outcome).toMatchObject({ kind: 'retryable', reason: expect.stringContaining('aborted') });
  });
});
