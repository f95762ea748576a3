import type { ChatPlatform } from '@herald/core';
import { discordAdapter } from './discord/discord-adapter.ts';
import type { AnyPlatformAdapter } from './platform-adapter.ts';
import { slackAdapter } from './slack/slack-adapter.ts';
import { telegramAdapter } from './telegram/telegram-adapter.ts';

/**
 * Every chat platform's adapter, keyed by the names of @herald/core's registry: a platform added
 * there without an adapter here fails the typecheck.
 */
export const PLATFORM_ADAPTERS: { readonly [Name in ChatPlatform]: AnyPlatformAdapter } = {
  telegram: telegramAdapter,
  discord: discordAdapter,
  slack: slackAdapter,
};
