/**
 * gaps channel (spec 4.5 /gaps): the request is forwarded as JSON to the configured portal endpoint.
 * PortalGapsRequestDto's fields are not shown by the spec, so gapsRequest is passed through untouched.
 */
import { z } from 'zod';
import { classifyHttpResponse, postJson } from './http.js';
import { neverThrow, type ChannelAdapter, type DeliveryOutcome, type SendContext } from './types.js';

export const gapsConfigSchema = z.object({
  url: z.url(),
  /** Extra headers, e.g. an Authorization for the portal. */
  headers: z.record(z.string(), z.string()).optional(),
  timeoutSeconds: z.number().int().positive().max(600).default(30),
});
export type GapsConfig = z.infer<typeof gapsConfigSchema>;

export interface GapsMessage {
  from?: string;
  /** date-time */
  sendTime?: string;
  gapsRequest: Record<string, unknown>;
  useSystemSettings?: boolean;
}

export function buildGapsPayload(message: GapsMessage): Record<string, unknown> {
  const payload: Record<string, unknown> = {};
  if (message.from !== undefined) payload.from = message.from;
  if (message.sendTime !== undefined) payload.sendTime = message.sendTime;
  payload.gapsRequest = message.gapsRequest;
  if (message.useSystemSettings !== undefined) payload.useSystemSettings = message.useSystemSettings;
  return payload;
}

async function sendGaps(message: GapsMessage, config: GapsConfig, context: SendContext): Promise<DeliveryOutcome> {
  const attempt = await postJson(config.url, buildGapsPayload(message), {
    timeoutMs: config.timeoutSeconds * 1000,
    headers: Object.entries(config.headers ?? {}),
    ...context,
  });
  return attempt.ok ? classifyHttpResponse(attempt.response) : attempt.outcome;
}

export const gapsAdapter: ChannelAdapter<GapsConfig, GapsMessage> = {
  channel: 'gaps',
  send: (message, config, context) => neverThrow(() => sendGaps(message, config, context)),
};
