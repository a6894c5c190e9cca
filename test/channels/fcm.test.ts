import { createVerify, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clearFcmTokenCache, fcmAdapter, fcmConfigSchema, pushTargetsOf, toFcmData, type FcmConfig } from '../../src/channels/fcm.js';
import { startSink, type RecordedRequest, type Sink } from './sink.js';
import { LOOPBACK } from './sink.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});

let oauth: Sink;
let fcm: Sink;
let config: FcmConfig;
const jwtClaims: Array<Record<string, unknown>> = [];

/** A token endpoint that really verifies the RS256 assertion with the service account's public key. */
function tokenEndpoint(req: RecordedRequest) {
  const form = new URLSearchParams(req.body);
  if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return { status: 415 };
  if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return { status: 400, body: { error: 'unsupported_grant_type' } };
  const [h, c, s] = (form.get('assertion') ?? '').split('.');
  if (!h || !c || !s) return { status: 400, body: { error: 'invalid_grant' } };
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>;
  const valid = createVerify('RSA-SHA256').update(`${h}.${c}`).verify(publicKey, Buffer.from(s, 'base64url'));
  if (!valid || header.alg !== 'RS256') return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } };
  jwtClaims.push(JSON.parse(Buffer.from(c, 'base64url').toString()) as Record<string, unknown>);
  return { status: 200, body: { access_token: `ya29.test-${jwtClaims.length}`, expires_in: 3599, token_type: 'Bearer' } };
}

beforeAll(async () => {
  oauth = await startSink();
  fcm = await startSink();
  config = fcmConfigSchema.parse({
    serviceAccount: {
      type: 'service_account',
      project_id: 'demo-project',
      private_key_id: 'k1',
      client_email: 'push@demo-project.iam.gserviceaccount.com',
      private_key: privateKey,
      token_uri: `${oauth.url}/token`,
    },
    sendEndpoint: fcm.url,
  });
});
beforeEach(() => {
  clearFcmTokenCache();
  jwtClaims.length = 0;
  oauth.requests.length = 0;
  fcm.requests.length = 0;
  oauth.reply(tokenEndpoint);
  fcm.reply({ status: 200, body: { name: 'projects/demo-project/messages/0:1500415314455276%31bd1c9631bd1c96' } });
});
afterAll(async () => {
  await oauth.close();
  await fcm.close();
});

describe('push = FCM HTTP v1', () => {
  it('gets a token with a verified RS256 JWT once, caches it, and posts the exact v1 message', async () => {
    const message = {
      target: { token: 'device-token-1' },
      title: 'Payment due',
      body: 'Your invoice is ready',
      image: 'https://example.org/i.png',
      data: { invoiceId: 'INV-1', amount: 12.5, paid: false, tags: ['a'] },
    };
    const first = await fcmAdapter.send(message, config, LOOPBACK);
    const second = await fcmAdapter.send({ target: { topic: 'news' }, title: 't' }, config, LOOPBACK);
    expect(first).toEqual({
      kind: 'delivered',
      detail: 'HTTP 200',
      providerMessageId: 'projects/demo-project/messages/0:1500415314455276%31bd1c9631bd1c96',
    });
    expect(second.kind).toBe('delivered');

    expect(oauth.requests).toHaveLength(1);
    const claims = jwtClaims[0] ?? {};
    expect(claims).toMatchObject({
      iss: 'push@demo-project.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/firebase.messaging',
      aud: `${oauth.url}/token`,
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
    expect(Math.abs(Number(claims.iat) - Date.now() / 1000)).toBeLessThan(60);

    expect(fcm.requests).toHaveLength(2);
    const [req, req2] = fcm.requests;
    expect(req?.url).toBe('/v1/projects/demo-project/messages:send');
    expect(req?.headers.authorization).toBe('Bearer ya29.test-1');
    expect(req2?.headers.authorization).toBe('Bearer ya29.test-1');
    expect(JSON.parse(req?.body ?? '')).toStrictEqual({
      message: {
        token: 'device-token-1',
        notification: { title: 'Payment due', body: 'Your invoice is ready', image: 'https://example.org/i.png' },
        data: { invoiceId: 'INV-1', amount: '12.5', paid: 'false', tags: '["a"]' },
      },
    });
    expect(JSON.parse(req2?.body ?? '')).toStrictEqual({ message: { topic: 'news', notification: { title: 't' } } });
  });

  it('concurrent first sends share one token request', async () => {
    const outcomes = await Promise.all([1, 2, 3].map((i) => fcmAdapter.send({ target: { token: `t${i}` }, body: 'b' }, config, LOOPBACK)));
    expect(outcomes.map((o) => o.kind)).toEqual(['delivered', 'delivered', 'delivered']);
    expect(oauth.requests).toHaveLength(1);
  });

  it('UNREGISTERED and INVALID_ARGUMENT are permanent', async () => {
    const fcmError = (code: number, status: string, errorCode: string) => ({
      status: code,
      body: {
        error: {
          code,
          message: 'Requested entity was not found.',
          status,
          details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode }],
        },
      },
    });
    fcm.reply(fcmError(404, 'NOT_FOUND', 'UNREGISTERED'), fcmError(400, 'INVALID_ARGUMENT', 'INVALID_ARGUMENT'));
    expect(await fcmAdapter.send({ target: { token: 'stale' } }, config, LOOPBACK)).toEqual({
      kind: 'permanent',
      reason: 'HTTP 404: UNREGISTERED: Requested entity was not found.',
    });
    expect(await fcmAdapter.send({ target: { token: 'x' } }, config, LOOPBACK)).toMatchObject({ kind: 'permanent', reason: expect.stringContaining('INVALID_ARGUMENT') });
  });

  it('429 QUOTA_EXCEEDED and 503 are retryable after Retry-After', async () => {
    fcm.reply(
      {
        status: 429,
        headers: { 'Retry-After': '30' },
        body: { error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'QUOTA_EXCEEDED' }] } },
      },
      { status: 503, headers: { 'Retry-After': '5' }, body: { error: { code: 503, status: 'UNAVAILABLE' } } },
    );
    expect(await fcmAdapter.send({ target: { token: 'x' } }, config, LOOPBACK)).toEqual({
      kind: 'retryable',
      reason: 'HTTP 429: QUOTA_EXCEEDED',
      retryAfterMs: 30_000,
    });
    expect(await fcmAdapter.send({ target: { token: 'x' } }, config, LOOPBACK)).toEqual({ kind: 'retryable', reason: 'HTTP 503: UNAVAILABLE', retryAfterMs: 5000 });
  });

  it('a 401 drops the cached token so the next attempt fetches a new one', async () => {
    fcm.reply({ status: 401, body: { error: { code: 401, status: 'UNAUTHENTICATED', message: 'expired' } } }, { status: 200, body: { name: 'n' } });
    expect((await fcmAdapter.send({ target: { token: 'x' } }, config, LOOPBACK)).kind).toBe('retryable');
    expect((await fcmAdapter.send({ target: { token: 'x' } }, config, LOOPBACK)).kind).toBe('delivered');
    expect(oauth.requests).toHaveLength(2);
    expect(fcm.requests[1]?.headers.authorization).toBe('Bearer ya29.test-2');
  });

  it('a wrong key is refused by the token endpoint: permanent; token endpoint 5xx: retryable', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    const wrong = { ...config, serviceAccount: { ...config.serviceAccount, private_key: other.privateKey } };
    expect(await fcmAdapter.send({ target: { token: 'x' } }, wrong, LOOPBACK)).toMatchObject({ kind: 'permanent', reason: expect.stringContaining('Invalid JWT Signature') });
    expect(fcm.requests).toHaveLength(0);
    clearFcmTokenCache();
    oauth.reply({ status: 503, headers: { 'Retry-After': '2' } });
    expect(await fcmAdapter.send({ target: { token: 'x' } }, config, LOOPBACK)).toMatchObject({ kind: 'retryable', retryAfterMs: 2000 });
  });
});

describe('push helpers', () => {
  it('splits a request into one unit per token plus the topic selection', () => {
    expect(pushTargetsOf({ deviceTokens: ['a', 'b'], topic: 'news' })).toEqual([{ token: 'a' }, { token: 'b' }, { topic: 'news' }]);
    expect(pushTargetsOf({ topic: '/topics/news', condition: "'news' in topics && 'ru' in topics" })).toEqual([
      { condition: "'news' in topics && 'ru' in topics" },
    ]);
    expect(toFcmData({ s: 's', n: 1, o: { a: 1 }, u: undefined, z: null })).toEqual({ s: 's', n: '1', o: '{"a":1}', z: 'null' });
  });
});
