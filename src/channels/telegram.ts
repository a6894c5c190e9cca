/**
 * chatA channel (spec 4.5 /webhook-chatA) = Telegram Bot API sendMessage.
 * https://core.telegram.org/bots/api#sendmessage
 */
import { z } from 'zod';
import { classifyHttpResponse, parseJson, postJson } from './http.js';
import { neverThrow, type ChannelAdapter, type DeliveryOutcome, type SendContext } from './types.js';

export const telegramConfigSchema = z.object({
  botToken: z.string().regex(/^\d+:[\w-]+$/, 'botToken must look like 123456:ABC-DEF (from @BotFather)'),
  apiBaseUrl: z.url().default('https://api.telegram.org'),
  timeoutSeconds: z.number().int().positive().max(600).default(30),
});
export type TelegramConfig = z.infer<typeof telegramConfigSchema>;

/** WebHookChatANotificationEntity (fields not shown by the spec): Telegram MessageEntity in camelCase. */
export interface TelegramEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  user?: Record<string, unknown>;
  language?: string;
  customEmojiId?: string;
}

export interface TelegramMessage {
  content: string;
  chatId: string;
  messageThreadId?: number;
  replyToMessageId?: number;
  parseMode?: string;
  disableWebPagePreview?: boolean;
  disableNotification?: boolean;
  protectContent?: boolean;
  allowSendingWithoutReply?: boolean;
  entities?: TelegramEntity[];
  /** Object, or its JSON serialization (spec: "serialized JSON"). Sent as given (Telegram field names). */
  replyMarkup?: Record<string, unknown> | string;
}

function toSnake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The exact sendMessage body. Absent optional fields are omitted, never sent as null. */
export function buildTelegramPayload(message: TelegramMessage): Record<string, unknown> {
  const payload: Record<string, unknown> = { chat_id: message.chatId, text: message.content };
  if (message.messageThreadId !== undefined) payload.message_thread_id = message.messageThreadId;
  if (message.parseMode) payload.parse_mode = message.parseMode;
  if (message.entities && message.entities.length > 0) {
    payload.entities = message.entities.map((e) =>
      Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined).map(([k, v]) => [toSnake(k), v])),
    );
  }
  if (message.disableWebPagePreview) payload.link_preview_options = { is_disabled: true };
  if (message.disableNotification !== undefined) payload.disable_notification = message.disableNotification;
  if (message.protectContent !== undefined) payload.protect_content = message.protectContent;
  if (message.replyToMessageId !== undefined) {
    const reply: Record<string, unknown> = { message_id: message.replyToMessageId };
    if (message.allowSendingWithoutReply !== undefined) reply.allow_sending_without_reply = message.allowSendingWithoutReply;
    payload.reply_parameters = reply;
  }
  if (message.replyMarkup !== undefined) {
    payload.reply_markup = typeof message.replyMarkup === 'string' ? (parseJson(message.replyMarkup) ?? message.replyMarkup) : message.replyMarkup;
  }
  return payload;
}

const telegramAnswerSchema = z.object({
  ok: z.boolean(),
  result: z.object({ message_id: z.number() }).loose().optional(),
  error_code: z.number().optional(),
  description: z.string().optional(),
  parameters: z.object({ retry_after: z.number().optional(), migrate_to_chat_id: z.number().optional() }).loose().optional(),
});

async function sendTelegram(message: TelegramMessage, config: TelegramConfig, context: SendContext): Promise<DeliveryOutcome> {
  const url = `${config.apiBaseUrl.replace(/\/+$/, '')}/bot${config.botToken}/sendMessage`;
  const attempt = await postJson(url, buildTelegramPayload(message), {
    timeoutMs: config.timeoutSeconds * 1000,
    ...context,
  });
  if (!attempt.ok) return attempt.outcome;
  const answer = telegramAnswerSchema.safeParse(parseJson(attempt.response.text));
  if (!answer.success) return classifyHttpResponse(attempt.response);
  const { ok, result, error_code, description, parameters } = answer.data;
  if (ok) {
    return classifyHttpResponse(attempt.response, {
      ...(result ? { providerMessageId: String(result.message_id) } : {}),
    });
  }
  const migrated = parameters?.migrate_to_chat_id !== undefined ? ` (chat migrated to ${parameters.migrate_to_chat_id})` : '';
  const retryAfter = parameters?.retry_after;
  return classifyHttpResponse(
    // Telegram repeats the HTTP status in error_code; trust the body when the status says 200.
    attempt.response.status >= 200 && attempt.response.status <= 299 && error_code !== undefined
      ? { ...attempt.response, status: error_code }
      : attempt.response,
    {
      reason: `telegram ${error_code ?? '?'}: ${description ?? 'no description'}${migrated}`,
      ...(retryAfter !== undefined ? { retryAfterMs: retryAfter * 1000 } : {}),
    },
  );
}

export const telegramAdapter: ChannelAdapter<TelegramConfig, TelegramMessage> = {
  channel: 'chatA',
  send: (message, config, context) => neverThrow(() => sendTelegram(message, config, context)),
};
