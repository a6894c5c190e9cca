/**
 * Channel registry: channel name -> adapter + per-system config schema. `general` has no adapter
 * (stored in-app by the integrator). Drive everything from CHANNEL_REGISTRY, never from a switch.
 */
import type { z } from 'zod';
import type { OutboundPolicy } from '../http/outbound-policy.js';
import { emailAdapter, emailConfigSchema, closeEmailTransports, type EmailConfig, type EmailMessage } from './email.js';
import { fcmAdapter, fcmConfigSchema, type FcmConfig, type PushMessage } from './fcm.js';
import { gapsAdapter, gapsConfigSchema, type GapsConfig, type GapsMessage } from './gaps.js';
import { mattermostAdapter, mattermostConfigSchema, type MattermostConfig, type MattermostMessage } from './mattermost.js';
import { closeSmsSessions, smsAdapter, smsConfigSchema, type SmsConfig, type SmsMessage } from './sms.js';
import { telegramAdapter, telegramConfigSchema, type TelegramConfig, type TelegramMessage } from './telegram.js';
import { permanent, type AdapterChannelName, type ChannelAdapter, type DeliveryOutcome, type SendContext } from './types.js';
import { webhookAdapter, webhookConfigSchema, type WebhookConfig, type WebhookMessage } from './webhook.js';

export * from './types.js';

/** Message (one delivery unit) per channel. */
export interface ChannelMessages {
  webhook: WebhookMessage;
  chatA: TelegramMessage;
  chatB: MattermostMessage;
  sms: SmsMessage;
  push: PushMessage;
  gaps: GapsMessage;
  email: EmailMessage;
}

/** Validated per-system config per channel. */
export interface ChannelConfigs {
  webhook: WebhookConfig;
  chatA: TelegramConfig;
  chatB: MattermostConfig;
  sms: SmsConfig;
  push: FcmConfig;
  gaps: GapsConfig;
  email: EmailConfig;
}

export interface ChannelEntry<Config, Message> {
  adapter: ChannelAdapter<Config, Message>;
  /** Parses the stored JSON settings (input may omit defaulted fields). */
  configSchema: z.ZodType<Config>;
  /** Dotted paths of the settings that are URLs the gateway will call (checked by the outbound policy). */
  urlSettings: readonly string[];
}

export type ChannelRegistry = { [K in AdapterChannelName]: ChannelEntry<ChannelConfigs[K], ChannelMessages[K]> };

export const CHANNEL_REGISTRY: ChannelRegistry = {
  webhook: { adapter: webhookAdapter, configSchema: webhookConfigSchema, urlSettings: [] },
  chatA: { adapter: telegramAdapter, configSchema: telegramConfigSchema, urlSettings: ['apiBaseUrl'] },
  chatB: { adapter: mattermostAdapter, configSchema: mattermostConfigSchema, urlSettings: ['webhookUrl'] },
  sms: { adapter: smsAdapter, configSchema: smsConfigSchema, urlSettings: [] },
  push: { adapter: fcmAdapter, configSchema: fcmConfigSchema, urlSettings: ['sendEndpoint', 'serviceAccount.token_uri'] },
  gaps: { adapter: gapsAdapter, configSchema: gapsConfigSchema, urlSettings: ['url'] },
  email: { adapter: emailAdapter, configSchema: emailConfigSchema, urlSettings: [] },
};

export const ADAPTER_CHANNELS = Object.keys(CHANNEL_REGISTRY) as AdapterChannelName[];

export function hasAdapter(channel: string): channel is AdapterChannelName {
  return Object.hasOwn(CHANNEL_REGISTRY, channel);
}

export type ConfigParse<K extends AdapterChannelName> =
  | { ok: true; config: ChannelConfigs[K] }
  | { ok: false; message: string };

/** Validate stored settings of a channel with a fix-it message (use at the edge when settings are saved). */
export function parseChannelConfig<K extends AdapterChannelName>(channel: K, raw: unknown): ConfigParse<K> {
  const entry: ChannelEntry<ChannelConfigs[K], ChannelMessages[K]> = CHANNEL_REGISTRY[channel];
  const parsed = entry.configSchema.safeParse(raw);
  if (parsed.success) return { ok: true, config: parsed.data };
  const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  return { ok: false, message: `invalid ${channel} settings: ${issues}` };
}

/** Refuses settings whose URLs the outbound policy refuses (an address literal that is not public), naming the setting. */
export function assertChannelUrlsAllowed(channel: AdapterChannelName, raw: unknown, outbound: OutboundPolicy, field = 'config'): void {
  for (const path of CHANNEL_REGISTRY[channel].urlSettings) {
    const value = path.split('.').reduce<unknown>((node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), raw);
    if (typeof value === 'string') outbound.assertAllowed(value, `${field}.${path}`);
  }
}

/**
 * Deliver one unit through a channel with raw (stored JSON) settings. Invalid settings are a
 * permanent outcome; never rejects.
 */
export async function deliver<K extends AdapterChannelName>(
  channel: K,
  message: ChannelMessages[K],
  rawConfig: unknown,
  context: SendContext,
): Promise<DeliveryOutcome> {
  const config = parseChannelConfig(channel, rawConfig);
  if (!config.ok) return permanent(config.message);
  const entry: ChannelEntry<ChannelConfigs[K], ChannelMessages[K]> = CHANNEL_REGISTRY[channel];
  return entry.adapter.send(message, config.config, context);
}

/** Releases pooled SMTP connections and SMPP sessions (graceful shutdown). */
export async function closeChannels(): Promise<void> {
  closeEmailTransports();
  await closeSmsSessions();
}
