/**
 * chatB channel (spec 4.5 /webhook-chatB) = Mattermost incoming webhook.
 * https://developers.mattermost.com/integrate/webhooks/incoming/
 */
import { z } from 'zod';
import { classifyHttpResponse, postJson } from './http.js';
import { neverThrow, permanent, type ChannelAdapter, type DeliveryOutcome, type SendContext } from './types.js';

export const mattermostConfigSchema = z.object({
  /** The incoming-webhook URL created in Mattermost (https://host/hooks/xxx). */
  webhookUrl: z.url(),
  timeoutSeconds: z.number().int().positive().max(600).default(30),
});
export type MattermostConfig = z.infer<typeof mattermostConfigSchema>;

/**
 * WebHookChatBAttachment (fields not shown by the spec): Mattermost message attachment.
 * camelCase keys (authorName, titleLink, imageUrl, ...) are converted to Mattermost's snake_case;
 * snake_case keys pass through unchanged.
 */
export type MattermostAttachment = Record<string, unknown>;

export interface MattermostMessage {
  content: string;
  channel?: string;
  username?: string;
  iconUrl?: string;
  iconEmoji?: string;
  /** When not empty it must begin with custom_ (spec 8). */
  type?: string;
  attachments?: MattermostAttachment[];
  props?: Record<string, unknown>;
}

function toSnake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function snakeAttachment(attachment: MattermostAttachment): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(attachment)) {
    if (value === undefined) continue;
    if (key === 'fields' && Array.isArray(value)) {
      out.fields = value; // field objects use title/value/short: same names in both styles
    } else {
      out[toSnake(key)] = value;
    }
  }
  return out;
}

/** The exact incoming-webhook body. Absent optional fields are omitted. */
export function buildMattermostPayload(message: MattermostMessage): Record<string, unknown> {
  const payload: Record<string, unknown> = { text: message.content };
  if (message.channel) payload.channel = message.channel;
  if (message.username) payload.username = message.username;
  if (message.iconUrl) payload.icon_url = message.iconUrl;
  if (message.iconEmoji) payload.icon_emoji = message.iconEmoji;
  if (message.type) payload.type = message.type;
  if (message.attachments && message.attachments.length > 0) payload.attachments = message.attachments.map(snakeAttachment);
  if (message.props) payload.props = message.props;
  return payload;
}

async function sendMattermost(message: MattermostMessage, config: MattermostConfig, context: SendContext): Promise<DeliveryOutcome> {
  if (message.type && !message.type.startsWith('custom_')) {
    return permanent(`type "${message.type}" must begin with custom_`);
  }
  const attempt = await postJson(config.webhookUrl, buildMattermostPayload(message), {
    timeoutMs: config.timeoutSeconds * 1000,
    ...context,
  });
  return attempt.ok ? classifyHttpResponse(attempt.response) : attempt.outcome;
}

export const mattermostAdapter: ChannelAdapter<MattermostConfig, MattermostMessage> = {
  channel: 'chatB',
  send: (message, config, context) => neverThrow(() => sendMattermost(message, config, context)),
};
