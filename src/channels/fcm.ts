/**
 * push channel (spec 4.5 /push) = Firebase Cloud Messaging HTTP v1.
 * https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages/send
 * Auth: OAuth 2.0 service account flow (RFC 7523 JWT bearer grant), access token cached.
 */
import { createSign } from 'node:crypto';
import { z } from 'zod';
import { classifyHttpResponse, parseJson, performHttp, postJson, type HttpResponse } from './http.js';
import { describeError, neverThrow, permanent, retryable, type ChannelAdapter, type DeliveryOutcome, type SendContext } from './types.js';

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const TOKEN_LIFETIME_S = 3600;
/** Refresh this long before the access token expires. */
const TOKEN_REFRESH_MARGIN_MS = 5 * 60_000;

export const fcmConfigSchema = z.object({
  /** The service-account JSON key file (extra keys of the file are ignored). */
  serviceAccount: z
    .object({
      project_id: z.string().min(1),
      client_email: z.string().min(1),
      private_key: z.string().includes('PRIVATE KEY', { message: 'private_key must be a PEM private key' }),
      token_uri: z.url().default('https://oauth2.googleapis.com/token'),
    })
    .loose(),
  sendEndpoint: z.url().default('https://fcm.googleapis.com'),
  timeoutSeconds: z.number().int().positive().max(600).default(30),
});
export type FcmConfig = z.infer<typeof fcmConfigSchema>;

/** One delivery unit: exactly one FCM target. */
export type PushTarget = { token: string } | { topic: string } | { condition: string };

export interface PushMessage {
  target: PushTarget;
  title?: string;
  body?: string;
  /** URL of a JPEG, PNG or BMP image (spec 8). */
  image?: string;
  data?: Record<string, unknown>;
}

/** The spec request fields that select devices. */
export interface PushRequestTargets {
  deviceTokens?: string[];
  topic?: string;
  condition?: string;
}

/**
 * Splits a push request into delivery units: one per device token, plus one for the topic
 * selection: `condition` when given (it already names topics, FCM allows one of the two), else `topic`.
 */
export function pushTargetsOf(request: PushRequestTargets): PushTarget[] {
  const targets: PushTarget[] = (request.deviceTokens ?? []).filter((t) => t.length > 0).map((token) => ({ token }));
  if (request.condition) targets.push({ condition: request.condition });
  else if (request.topic) targets.push({ topic: request.topic.replace(/^\/topics\//, '') });
  return targets;
}

/** FCM `data` must be a map of strings: strings pass through, other values are JSON-serialized. */
export function toFcmData(data: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    out[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return out;
}

export function buildFcmPayload(message: PushMessage): { message: Record<string, unknown> } {
  const body: Record<string, unknown> = { ...message.target };
  const notification: Record<string, string> = {};
  if (message.title !== undefined) notification.title = message.title;
  if (message.body !== undefined) notification.body = message.body;
  if (message.image !== undefined) notification.image = message.image;
  if (Object.keys(notification).length > 0) body.notification = notification;
  if (message.data && Object.keys(message.data).length > 0) body.data = toFcmData(message.data);
  return { message: body };
}

function base64url(input: string | Buffer): string {
  return Buffer.from(input).toString('base64url');
}

/** RS256 JWT assertion for the JWT-bearer grant. */
export function buildServiceAccountJwt(
  account: { client_email: string; private_key: string; token_uri: string },
  nowSeconds: number = Math.floor(Date.now() / 1000),
): string {
  const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = base64url(
    JSON.stringify({
      iss: account.client_email,
      scope: FCM_SCOPE,
      aud: account.token_uri,
      iat: nowSeconds,
      exp: nowSeconds + TOKEN_LIFETIME_S,
    }),
  );
  const signingInput = `${header}.${claims}`;
  const signature = createSign('RSA-SHA256').update(signingInput).sign(account.private_key);
  return `${signingInput}.${base64url(signature)}`;
}

interface CachedToken {
  accessToken: string;
  expiresAt: number;
}
type TokenResult = { ok: true; token: string } | { ok: false; outcome: DeliveryOutcome };

const tokenCache = new Map<string, CachedToken>();
const tokenInFlight = new Map<string, Promise<TokenResult>>();

/** Forget cached access tokens (tests, credential rotation). */
export function clearFcmTokenCache(): void {
  tokenCache.clear();
  tokenInFlight.clear();
}

const tokenAnswerSchema = z.object({ access_token: z.string().min(1), expires_in: z.number().positive().optional() });

async function fetchAccessToken(config: FcmConfig, context: SendContext): Promise<TokenResult> {
  const account = config.serviceAccount;
  let assertion: string;
  try {
    assertion = buildServiceAccountJwt(account);
  } catch (error) {
    return { ok: false, outcome: permanent(`cannot sign service-account JWT: ${describeError(error)}`) };
  }
  const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
  const attempt = await performHttp(
    {
      url: account.token_uri,
      method: 'POST',
      headers: [
        ['Content-Type', 'application/x-www-form-urlencoded'],
        ['Accept', 'application/json'],
      ],
      body: form.toString(),
    },
    { timeoutMs: config.timeoutSeconds * 1000, ...context },
  );
  if (!attempt.ok) return attempt;
  const { response } = attempt;
  const answer = tokenAnswerSchema.safeParse(parseJson(response.text));
  if (response.status !== 200 || !answer.success) {
    const outcome = classifyHttpResponse(response.status === 200 ? { ...response, status: 502 } : response);
    const why = outcome.kind === 'delivered' ? '' : outcome.reason;
    // 400/401 invalid_grant etc.: the credentials are wrong -> permanent; 5xx/429 -> retryable.
    return {
      ok: false,
      outcome:
        outcome.kind === 'retryable'
          ? retryable(`OAuth token endpoint: ${why}`, outcome.retryAfterMs)
          : permanent(`OAuth token endpoint: ${why}`),
    };
  }
  const expiresIn = answer.data.expires_in ?? TOKEN_LIFETIME_S;
  tokenCache.set(cacheKey(config), { accessToken: answer.data.access_token, expiresAt: Date.now() + expiresIn * 1000 });
  return { ok: true, token: answer.data.access_token };
}

function cacheKey(config: FcmConfig): string {
  return `${config.serviceAccount.client_email}\n${config.serviceAccount.token_uri}`;
}

async function getAccessToken(config: FcmConfig, context: SendContext): Promise<TokenResult> {
  const key = cacheKey(config);
  const cached = tokenCache.get(key);
  if (cached && cached.expiresAt - TOKEN_REFRESH_MARGIN_MS > Date.now()) return { ok: true, token: cached.accessToken };
  const pending = tokenInFlight.get(key);
  if (pending) return pending;
  const request = fetchAccessToken(config, context).finally(() => tokenInFlight.delete(key));
  tokenInFlight.set(key, request);
  return request;
}

const fcmErrorSchema = z.object({
  error: z
    .object({
      code: z.number().optional(),
      message: z.string().optional(),
      status: z.string().optional(),
      details: z.array(z.object({ '@type': z.string().optional(), errorCode: z.string().optional() }).loose()).optional(),
    })
    .loose(),
});

/** FcmError.errorCode (or the google.rpc status) of an error answer. */
export function fcmErrorCode(response: HttpResponse): { errorCode?: string; status?: string; message?: string } {
  const parsed = fcmErrorSchema.safeParse(parseJson(response.text));
  if (!parsed.success) return {};
  const { details, status, message } = parsed.data.error;
  const fcm = details?.find((d) => d['@type'] === 'type.googleapis.com/google.firebase.fcm.v1.FcmError');
  return {
    ...(fcm?.errorCode ? { errorCode: fcm.errorCode } : {}),
    ...(status ? { status } : {}),
    ...(message ? { message } : {}),
  };
}

/** errorCodes that retrying can never fix, whatever the HTTP status says. */
const PERMANENT_FCM_ERRORS = new Set(['UNREGISTERED', 'INVALID_ARGUMENT', 'SENDER_ID_MISMATCH', 'THIRD_PARTY_AUTH_ERROR']);

async function sendFcm(message: PushMessage, config: FcmConfig, context: SendContext): Promise<DeliveryOutcome> {
  const token = await getAccessToken(config, context);
  if (!token.ok) return token.outcome;
  const url = `${config.sendEndpoint.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(config.serviceAccount.project_id)}/messages:send`;
  const attempt = await postJson(url, buildFcmPayload(message), {
    headers: [['Authorization', `Bearer ${token.token}`]],
    timeoutMs: config.timeoutSeconds * 1000,
    ...context,
  });
  if (!attempt.ok) return attempt.outcome;
  const { response } = attempt;
  if (response.status >= 200 && response.status <= 299) {
    const name = (parseJson(response.text) as { name?: unknown } | undefined)?.name;
    return classifyHttpResponse(response, typeof name === 'string' ? { providerMessageId: name } : {});
  }
  const { errorCode, status, message: text } = fcmErrorCode(response);
  const code = errorCode ?? status;
  const reason = `${code ?? 'FCM error'}${text ? `: ${text}` : ''}`;
  if (errorCode && PERMANENT_FCM_ERRORS.has(errorCode)) return permanent(`HTTP ${response.status}: ${reason}`);
  if (response.status === 401) {
    // Our access token was rejected (expired or revoked early): drop it; the next attempt fetches a new one.
    tokenCache.delete(cacheKey(config));
    return retryable(`HTTP 401: ${reason}`);
  }
  return classifyHttpResponse(response, { reason });
}

export const fcmAdapter: ChannelAdapter<FcmConfig, PushMessage> = {
  channel: 'push',
  send: (message, config, context) => neverThrow(() => sendFcm(message, config, context)),
};
