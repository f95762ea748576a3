import type { ChatPlatform, DeliveryOnlyPlatform } from '@herald/core';
import { discordAdapter } from './discord/discord-adapter.ts';
import { emailAdapter } from './email/email-adapter.ts';
import type { AnyDeliveryAdapter, AnyPlatformAdapter } from './platform-adapter.ts';
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

/** Every delivery-only platform's adapter (they only send), keyed by the registry's names. */
export const DELIVERY_ADAPTERS: { readonly [Name in DeliveryOnlyPlatform]: AnyDeliveryAdapter } = {
  email: emailAdapter,
};
