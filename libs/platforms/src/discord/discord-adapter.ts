import { formatNamedChat, parseNamedChat, PLATFORM_FACTS, readStoredTarget } from '@herald/core';
import type { DiscordConfig } from '@herald/core';
import { defineAdapter } from '../platform-adapter.ts';
import type { PlatformAdapter } from '../platform-adapter.ts';
import { deployDiscordCommands, DiscordIngress } from './discord-ingress.ts';
import { DISCORD_LIMIT, DiscordSender } from './discord-sender.ts';
import { probeToken } from '../token-check.ts';

/**
 * Discord behind the platform contract: one gateway connection per shard, held under a lease, and
 * REST for sends. It takes no webhooks (interactions arrive on the gateway), so no webhook check.
 */
export const discordAdapter: PlatformAdapter<DiscordConfig> = defineAdapter({
  name: 'discord',
  facts: PLATFORM_FACTS.discord,
  settings: (platforms) => platforms.discord,
  accounts: (platforms) => platforms.accounts.discord,
  createSender: (settings) => DiscordSender.fromConfig(settings),
  async startInbound(settings, deps, logger) {
    if (settings.allowedUsers.length === 0) {
      logger.warn({}, 'DISCORD_ALLOWED_USERS is empty: everyone gets the allowlist refusal (use * to allow everyone)');
    }
    const gateway = new DiscordIngress({ config: settings, ...deps, logger }).start();
    return { stop: () => gateway.stop() };
  },
  parseTarget: (text) => parseNamedChat(/^discord[:@]/i.test(text) ? text : `discord:${text}`),
  formatTarget: (chat) => formatNamedChat({ platform: 'discord', ...chat }),
  readTarget: readStoredTarget,
  async deployCommands(platforms) {
    if (!platforms.discord) throw new Error('DISCORD_BOT_TOKEN is not set');
    return deployDiscordCommands(platforms.discord);
  },
  // GET /users/@me answers only for a token Discord knows.
  checkToken: (token, env) => probeToken(`${(env.DISCORD_API_BASE ?? 'https://discord.com/api').replace(/\/+$/, '')}/users/@me`, { authorization: `Bot ${token}` }),
  rateLimits: { maxMessageChars: DISCORD_LIMIT, backoff: '429 with retry_after per route (discord.js RateLimitError)' },
  lease: 'one-connection-per-account',
});
