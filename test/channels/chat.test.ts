import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { gapsAdapter, gapsConfigSchema } from '../../src/channels/gaps.js';
import { mattermostAdapter, mattermostConfigSchema } from '../../src/channels/mattermost.js';
import { telegramAdapter, telegramConfigSchema } from '../../src/channels/telegram.js';
import { startSink, type Sink } from './sink.js';
import { LOOPBACK } from './sink.js';

let sink: Sink;
beforeAll(async () => {
  sink = await startSink();
});
beforeEach(() => {
  sink.requests.length = 0;
  sink.reply({ status: 200, body: 'ok' });
});
afterAll(() => sink.close());

describe('chatA = Telegram sendMessage', () => {
  const config = () => telegramConfigSchema.parse({ botToken: '123456:ABC-def_9', apiBaseUrl: `${sink.url}/tg/` });

  it('posts the exact snake_case body to /bot{token}/sendMessage and returns message_id', async () => {
    sink.reply({ status: 200, body: { ok: true, result: { message_id: 4711, chat: { id: -100 } } } });
    const outcome = await telegramAdapter.send(
      {
        content: '<b>Hi</b>',
        chatId: '@channelname',
        messageThreadId: 12,
        replyToMessageId: 99,
        allowSendingWithoutReply: true,
        parseMode: 'HTML',
        disableWebPagePreview: true,
        disableNotification: true,
        protectContent: false,
        entities: [{ type: 'custom_emoji', offset: 0, length: 2, customEmojiId: '5368324170671202286' }],
        replyMarkup: '{"inline_keyboard":[[{"text":"Open","url":"https://example.org"}]]}',
      },
      config(), LOOPBACK);
    expect(outcome).toEqual({ kind: 'delivered', detail: 'HTTP 200', providerMessageId: '4711' });
    const [req] = sink.requests;
    expect(req?.method).toBe('POST');
    expect(req?.url).toBe('/tg/bot123456:ABC-def_9/sendMessage');
    expect(req?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(req?.body ?? '')).toStrictEqual({
      chat_id: '@channelname',
      text: '<b>Hi</b>',
      message_thread_id: 12,
      parse_mode: 'HTML',
      entities: [{ type: 'custom_emoji', offset: 0, length: 2, custom_emoji_id: '5368324170671202286' }],
      link_preview_options: { is_disabled: true },
      disable_notification: true,
      protect_content: false,
      reply_parameters: { message_id: 99, allow_sending_without_reply: true },
      reply_markup: { inline_keyboard: [[{ text: 'Open', url: 'https://example.org' }]] },
    });
  });

  it('sends only chat_id and text when nothing else is given', async () => {
    sink.reply({ status: 200, body: { ok: true, result: { message_id: 1 } } });
    await telegramAdapter.send({ content: 'plain', chatId: '-1001' }, config(), LOOPBACK);
    expect(JSON.parse(sink.requests[0]?.body ?? '')).toStrictEqual({ chat_id: '-1001', text: 'plain' });
  });

  it('429 with parameters.retry_after is retryable after that many seconds', async () => {
    sink.reply({
      status: 429,
      body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 17', parameters: { retry_after: 17 } },
    });
    expect(await telegramAdapter.send({ content: 'x', chatId: '1' }, config(), LOOPBACK)).toEqual({
      kind: 'retryable',
      reason: 'HTTP 429: telegram 429: Too Many Requests: retry after 17',
      retryAfterMs: 17_000,
    });
  });

  it('400 and 403 are permanent, 5xx retryable', async () => {
    sink.reply(
      { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } },
      { status: 403, body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' } },
      { status: 502, body: '<html>Bad Gateway</html>' },
    );
    const send = () => telegramAdapter.send({ content: 'x', chatId: '1' }, config(), LOOPBACK);
    expect(await send()).toEqual({ kind: 'permanent', reason: 'HTTP 400: telegram 400: Bad Request: chat not found' });
    expect(await send()).toMatchObject({ kind: 'permanent', reason: expect.stringContaining('blocked') });
    expect(await send()).toMatchObject({ kind: 'retryable' });
  });

  it('config schema rejects a malformed token and defaults the API base URL', () => {
    expect(telegramConfigSchema.safeParse({ botToken: 'nope' }).success).toBe(false);
    expect(telegramConfigSchema.parse({ botToken: '1:a' }).apiBaseUrl).toBe('https://api.telegram.org');
  });
});

describe('chatB = Mattermost incoming webhook', () => {
  const config = () => mattermostConfigSchema.parse({ webhookUrl: `${sink.url}/hooks/xyz` });

  it('posts the exact Mattermost body', async () => {
    const outcome = await mattermostAdapter.send(
      {
        content: 'Build #5 **failed**',
        channel: 'town-square',
        username: 'ci-bot',
        iconUrl: 'https://example.org/bot.png',
        iconEmoji: ':robot:',
        type: 'custom_ci',
        attachments: [
          {
            fallback: 'Build failed',
            color: '#FF0000',
            authorName: 'CI',
            titleLink: 'https://ci.example.org/5',
            title: 'Build #5',
            fields: [{ title: 'Branch', value: 'main', short: true }],
            image_url: 'https://example.org/graph.png',
          },
        ],
        props: { card: 'details', build: 5 },
      },
      config(), LOOPBACK);
    expect(outcome).toEqual({ kind: 'delivered', detail: 'HTTP 200' });
    const [req] = sink.requests;
    expect(req?.url).toBe('/hooks/xyz');
    expect(JSON.parse(req?.body ?? '')).toStrictEqual({
      text: 'Build #5 **failed**',
      channel: 'town-square',
      username: 'ci-bot',
      icon_url: 'https://example.org/bot.png',
      icon_emoji: ':robot:',
      type: 'custom_ci',
      attachments: [
        {
          fallback: 'Build failed',
          color: '#FF0000',
          author_name: 'CI',
          title_link: 'https://ci.example.org/5',
          title: 'Build #5',
          fields: [{ title: 'Branch', value: 'main', short: true }],
          image_url: 'https://example.org/graph.png',
        },
      ],
      props: { card: 'details', build: 5 },
    });
  });

  it('a type not starting with custom_ is permanent without a request; 400 permanent; 503 retryable', async () => {
    expect(await mattermostAdapter.send({ content: 'x', type: 'system_join' }, config(), LOOPBACK)).toMatchObject({ kind: 'permanent' });
    expect(sink.requests).toHaveLength(0);
    sink.reply({ status: 400, body: { id: 'web.incoming_webhook.text.app_error' } }, { status: 503, headers: { 'Retry-After': '3' } });
    expect((await mattermostAdapter.send({ content: 'x' }, config(), LOOPBACK)).kind).toBe('permanent');
    expect(await mattermostAdapter.send({ content: 'x' }, config(), LOOPBACK)).toEqual({ kind: 'retryable', reason: 'HTTP 503', retryAfterMs: 3000 });
  });
});

describe('gaps portal', () => {
  it('posts from, sendTime, gapsRequest and useSystemSettings with configured headers', async () => {
    const config = gapsConfigSchema.parse({ url: `${sink.url}/portal/gaps`, headers: { Authorization: 'Bearer portal-key' } });
    const gapsRequest = { documents: [{ id: 'd1', name: 'act.pdf' }], settings: { channel: 'lk' }, attachments: [] };
    const outcome = await gapsAdapter.send(
      { from: 'registry', sendTime: '2026-05-01T10:00:00+03:00', gapsRequest, useSystemSettings: true },
      config, LOOPBACK);
    expect(outcome.kind).toBe('delivered');
    const [req] = sink.requests;
    expect(req?.url).toBe('/portal/gaps');
    expect(req?.headers.authorization).toBe('Bearer portal-key');
    expect(JSON.parse(req?.body ?? '')).toStrictEqual({
      from: 'registry',
      sendTime: '2026-05-01T10:00:00+03:00',
      gapsRequest,
      useSystemSettings: true,
    });
    sink.reply({ status: 422, body: { error: 'bad document' } });
    expect((await gapsAdapter.send({ gapsRequest: {} }, config, LOOPBACK)).kind).toBe('permanent');
  });
});
