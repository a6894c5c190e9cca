import type { OutboundPolicy } from '../http/outbound-policy.js';

/**
 * The narrow contract every notification channel adapter implements (STYLE.md rule 10):
 * an adapter performs ONE delivery unit and reports how it went; it never throws.
 * The delivery worker (integrator) owns retries, scheduling and persistence.
 */

/** Channel names of spec 4.5 (webhook, webhook-chatA, webhook-chatB, sms, push, gaps, email, general). */
export type ChannelName = 'webhook' | 'chatA' | 'chatB' | 'sms' | 'push' | 'gaps' | 'email' | 'general';

/** Channels that leave the process; `general` is stored in-app by the integrator and has no adapter. */
export type AdapterChannelName = Exclude<ChannelName, 'general'>;

export type DeliveryOutcome =
  | { kind: 'delivered'; detail?: string; providerMessageId?: string }
  | { kind: 'retryable'; reason: string; retryAfterMs?: number }
  | { kind: 'permanent'; reason: string };

/** What a send needs beyond its message and settings. */
export interface SendContext {
  /** Where HTTP requests may go (OUTBOUND_ALLOW); SMTP and SMPP servers are the operator's settings. */
  outbound: OutboundPolicy;
  signal?: AbortSignal | undefined;
}

export interface ChannelAdapter<Config, Message> {
  readonly channel: ChannelName;
  /** Never rejects: every failure is classified as `retryable` or `permanent`. */
  send(message: Message, config: Config, context: SendContext): Promise<DeliveryOutcome>;
}

/** Header pair as used by the webhook request (spec model NameValue). */
export interface NameValue {
  name: string;
  value: string;
}

export function delivered(detail?: string, providerMessageId?: string): DeliveryOutcome {
  const outcome: { kind: 'delivered'; detail?: string; providerMessageId?: string } = { kind: 'delivered' };
  if (detail !== undefined) outcome.detail = detail;
  if (providerMessageId !== undefined) outcome.providerMessageId = providerMessageId;
  return outcome;
}

export function retryable(reason: string, retryAfterMs?: number): DeliveryOutcome {
  return retryAfterMs === undefined ? { kind: 'retryable', reason } : { kind: 'retryable', reason, retryAfterMs };
}

export function permanent(reason: string): DeliveryOutcome {
  return { kind: 'permanent', reason };
}

/** Message of any thrown value, for outcome reasons (never a stack trace). */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${typeof code === 'string' ? `${code} ` : ''}${error.message}${cause}`;
  }
  return String(error);
}

/** Last-resort guard so an adapter can never reject, even on a programming error. */
export async function neverThrow(
  run: () => Promise<DeliveryOutcome>,
  classify: (error: unknown) => DeliveryOutcome = (error) => retryable(`unexpected error: ${describeError(error)}`),
): Promise<DeliveryOutcome> {
  try {
    return await run();
  } catch (error) {
    return classify(error);
  }
}

/** Truncate provider answers quoted in outcome reasons. */
export function snippet(text: string, max = 300): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}
