import { formatNamedChat, parseNamedChat, PLATFORM_FACTS, readStoredTarget } from '@herald/core';
import type { SlackConfig } from '@herald/core';
import { defineAdapter } from '../platform-adapter.ts';
import type { InboundHandle, PlatformAdapter } from '../platform-adapter.ts';
import { SlackIngress } from './slack-ingress.ts';
import { SLACK_LIMIT, SlackSender } from './slack-sender.ts';
import { slackWebhooks } from './slack-webhooks.ts';

/** The running inbound side, with the ingress the routes and tests reach. */
export type SlackInbound = InboundHandle & { ingress: SlackIngress };

/**
 * Slack behind the platform contract: Socket Mode (SLACK_APP_TOKEN, one socket per app under a
 * lease) and the Events API routes (SLACK_SIGNING_SECRET), either or both; the Web API for sends.
 * Targets are `slack:<channel>[:<thread_ts>]`, or `slack@<account>:<channel>` for another bot.
 */
export const slackAdapter: PlatformAdapter<SlackConfig, SlackInbound> = defineAdapter({
  name: 'slack',
  facts: PLATFORM_FACTS.slack,
  settings: (platforms) => platforms.slack,
  createSender: (settings) => SlackSender.fromConfig(settings),
  async startInbound(settings, deps, logger) {
    if (settings.allowedUsers.length === 0) {
      logger.warn({}, 'SLACK_ALLOWED_USERS is empty: everyone gets the allowlist refusal (use * to allow everyone)');
    }
    if (settings.appToken === undefined && settings.signingSecret === undefined) {
      logger.warn({}, 'neither SLACK_APP_TOKEN nor SLACK_SIGNING_SECRET is set: Slack can be posted to, but nothing is heard from it');
    }
    const ingress = new SlackIngress({ config: settings, ...deps, logger });
    const socket = settings.appToken === undefined ? undefined : ingress.startSocketMode(settings.appToken);
    return {
      ingress,
      stop: async () => socket?.stop(),
      webhooks: settings.signingSecret === undefined ? [] : slackWebhooks(ingress, settings.signingSecret),
    };
  },
  parseTarget: (text) => parseNamedChat(/^slack[@:]/i.test(text) ? text : `slack:${text}`),
  formatTarget: (chat) => formatNamedChat({ platform: 'slack', ...chat }),
  readTarget: readStoredTarget,
  // No verifyWebhook: Slack's signature covers the raw body, so its routes check it themselves
  // (slack-webhooks.ts), before anything of the request is read.
  rateLimits: { maxMessageChars: SLACK_LIMIT, backoff: '429 with Retry-After per method; calls spaced per method and channel' },
  lease: 'one-connection-per-account',
});
