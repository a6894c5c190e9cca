/**
 * webhook channel (spec 4.5 /v1/systems/{systemId}/webhook): performs the HTTP request as given.
 */
import { z } from 'zod';
import { HTTP_METHODS, classifyHttpResponse, hasHeader, performHttp, type HttpMethod } from './http.js';
import { neverThrow, permanent, type ChannelAdapter, type DeliveryOutcome, type NameValue, type SendContext } from './types.js';

/** Per-system settings. The request itself carries url, method and headers. */
export const webhookConfigSchema = z.object({
  /** Used when the request has no timeOutSeconds. */
  defaultTimeOutSeconds: z.number().int().positive().max(600).default(30),
});
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;

export interface WebhookMessage {
  url: string;
  method?: HttpMethod;
  headers?: NameValue[];
  /** JSON body sent as is (a copy, when textFieldPath is used). */
  body?: unknown;
  /** Dot path inside body (`a.b.text`, `items.0.text`) that receives `text`. */
  textFieldPath?: string;
  /** The rendered message text placed at textFieldPath. */
  text?: string;
  timeOutSeconds?: number;
}

/** Methods that carry no request body (RFC 9110: GET/HEAD have no defined body semantics, TRACE must not). */
const BODYLESS_METHODS: ReadonlySet<HttpMethod> = new Set<HttpMethod>(['GET', 'HEAD', 'TRACE']);

type JsonContainer = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is JsonContainer {
  return typeof value === 'object' && value !== null;
}

/**
 * Returns a deep copy of `body` with `value` written at the dot path. Missing steps are created:
 * an array when the next segment is a non-negative integer, otherwise an object.
 * Throws on an empty segment or when a step is a scalar (caller turns that into `permanent`).
 */
export function setAtPath(body: unknown, path: string, value: unknown): unknown {
  const segments = path.split('.');
  if (segments.some((s) => s === '')) throw new Error(`textFieldPath "${path}" has an empty segment`);
  const root: unknown = body === undefined || body === null ? {} : structuredClone(body);
  if (!isContainer(root)) throw new Error('textFieldPath needs a JSON object or array body');
  let node: JsonContainer = root;
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    const isIndex = /^\d+$/.test(segment);
    if (Array.isArray(node) && !isIndex) throw new Error(`textFieldPath "${path}": "${segment}" is not an array index`);
    const container = node as Record<string, unknown>;
    if (last) {
      container[segment] = value;
      return;
    }
    let next = container[segment];
    if (next === undefined || next === null) {
      next = /^\d+$/.test(segments[i + 1] ?? '') ? [] : {};
      container[segment] = next;
    }
    if (!isContainer(next)) throw new Error(`textFieldPath "${path}": "${segment}" is not an object`);
    node = next;
  });
  return root;
}

async function sendWebhook(message: WebhookMessage, config: WebhookConfig, context: SendContext): Promise<DeliveryOutcome> {
  const method = message.method ?? 'POST';
  if (!(HTTP_METHODS as readonly string[]).includes(method)) return permanent(`unsupported method ${String(method)}`);
  let body = message.body;
  if (message.textFieldPath) {
    try {
      body = setAtPath(body, message.textFieldPath, message.text ?? '');
    } catch (error) {
      return permanent(error instanceof Error ? error.message : String(error));
    }
  }
  const headers: Array<readonly [string, string]> = (message.headers ?? []).map((h) => [h.name, h.value] as const);
  const sendBody = body !== undefined && !BODYLESS_METHODS.has(method);
  if (sendBody && !hasHeader(headers, 'content-type')) headers.unshift(['Content-Type', 'application/json; charset=utf-8']);
  const timeOutSeconds = message.timeOutSeconds && message.timeOutSeconds > 0 ? message.timeOutSeconds : config.defaultTimeOutSeconds;
  const attempt = await performHttp(
    { url: message.url, method, headers, ...(sendBody ? { body: JSON.stringify(body) } : {}) },
    { timeoutMs: timeOutSeconds * 1000, ...context },
  );
  return attempt.ok ? classifyHttpResponse(attempt.response) : attempt.outcome;
}

export const webhookAdapter: ChannelAdapter<WebhookConfig, WebhookMessage> = {
  channel: 'webhook',
  send: (message, config, context) => neverThrow(() => sendWebhook(message, config, context)),
};
