import { formatNamedChat, parseNamedChat, PLATFORM_FACTS, readStoredTarget } from '@herald/core';
import type { TelegramConfig } from '@herald/core';
import { defineAdapter } from '../platform-adapter.ts';
import type { InboundHandle, PlatformAdapter } from '../platform-adapter.ts';
import { TelegramIngress, verifyTelegramSecret } from './telegram-ingress.ts';
import { TELEGRAM_LIMIT, TelegramSender } from './telegram-sender.ts';
import { telegramWebhook } from './telegram-webhook.ts';
import { probeToken } from '../token-check.ts';

/** Telegram behind the platform contract: Bot API long polling (leased) or a webhook with a secret header. */
/** The running inbound side, with its ingress and the webhook route that hands updates to it. */
export type TelegramInbound = InboundHandle & { ingress: TelegramIngress };

export const telegramAdapter: PlatformAdapter<TelegramConfig, TelegramInbound> = defineAdapter({
  name: 'telegram',
  facts: PLATFORM_FACTS.telegram,
  settings: (platforms) => platforms.telegram,
  accounts: (platforms) => platforms.accounts.telegram,
  createSender: (settings) => TelegramSender.fromConfig(settings),
  async startInbound(settings, deps, logger) {
    if (settings.allowedUsers.length === 0) {
      logger.warn({}, 'TELEGRAM_ALLOWED_USERS is empty: everyone gets the allowlist refusal (use * to allow everyone)');
    }
    const ingress = new TelegramIngress({ config: settings, ...deps, logger });
    // The route is served in polling mode too, as it always was: without a webhook secret it refuses every request.
    const webhooks = [telegramWebhook(ingress, logger)];
    if (settings.mode === 'polling') {
      const poller = ingress.startPolling();
      return { stop: () => poller.stop(), ingress, webhooks };
    }
    // Telegram being unreachable must not keep the API down; the webhook route works regardless.
    await ingress.registerWebhook().catch((error: unknown) => logger.error({ err: error }, 'setWebhook failed; set it by hand or restart once Telegram is reachable'));
    return { stop: async () => undefined, ingress, webhooks };
  },
  // One route for every account: named accounts of HERALD_PLATFORMS_FILE always poll, so the route
  // is the first account's (the default's when there is one), as it was before accounts existed.
  joinWebhooks: (started) => started[0]?.webhooks ?? [],
  parseTarget: (text) => parseNamedChat(/^telegram[:@]/i.test(text) ? text : `telegram:${text}`),
  formatTarget: (chat) => formatNamedChat({ platform: 'telegram', ...chat }),
  readTarget: readStoredTarget,
  verifyWebhook: (settings, headers) => verifyTelegramSecret(settings.webhookSecret, headers['x-telegram-bot-api-secret-token']),
  // getMe answers only for a token Telegram knows.
  checkToken: (token, env) => probeToken(`${(env.TELEGRAM_API_ROOT ?? 'https://api.telegram.org').replace(/\/+$/, '')}/bot${token}/getMe`),
  rateLimits: { maxMessageChars: TELEGRAM_LIMIT, backoff: '429 with retry_after seconds' },
  lease: 'one-connection-per-account',
});
