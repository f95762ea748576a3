import type { FakeDiscord } from './fake-discord.ts';
import type { FakeTelegram } from './fake-telegram.ts';

/**
 * A stack's environment for tests about people on chat platforms: Telegram by webhook with `secret`
 * (and Discord when given) pointed at their fakes, everyone allowed, deliveries polled every 100 ms.
 * A test adds the settings it is about (limits, operators) beside it.
 */
export function openChatsEnv(secret: string, telegram: FakeTelegram, discord?: FakeDiscord): Record<string, string> {
  return {
    ...telegram.env,
    ...(discord ? { ...discord.env, DISCORD_ALLOWED_USERS: '*' } : {}),
    TELEGRAM_MODE: 'webhook',
    TELEGRAM_WEBHOOK_SECRET: secret,
    TELEGRAM_WEBHOOK_URL: 'https://herald.example.com/telegram/webhook',
    TELEGRAM_ALLOWED_USERS: '*',
    HERALD_DELIVERY_POLL_MS: '100',
  };
}
