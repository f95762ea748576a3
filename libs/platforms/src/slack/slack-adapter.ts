import { formatNamedChat, parseNamedChat, PLATFORM_FACTS, readStoredTarget } from '@herald/core';
import type { SlackConfig } from '@herald/core';
import { defineAdapter } from '../platform-adapter.ts';
import type { InboundHandle, PlatformAdapter } from '../platform-adapter.ts';
import { probeToken } from '../token-check.ts';
import type { TokenCheck } from '../token-check.ts';
import { SlackIngress } from './slack-ingress.ts';
import { SLACK_LIMIT, SlackSender } from './slack-sender.ts';
import { slackWebhooks } from './slack-webhooks.ts';

/**
 * Slack knows the token: auth.test for the bot token, apps.connections.open (which only hands out
 * a Socket Mode URL, nothing connects to it) for the app-level one, at SLACK_API_URL as the
 * settings read it. The Web API answers 200 either way; `ok` says whether it took the token.
 */
function checkSlackToken(token: string, env: Readonly<Record<string, string | undefined>>, variable: string): Promise<TokenCheck> {
  const method = variable === 'SLACK_APP_TOKEN' ? 'apps.connections.open' : 'auth.test';
  const base = (env.SLACK_API_URL ?? 'https://slack.com/api/').replace(/\/+$/, '');
  return probeToken(
    `${base}/${method}`,
    { authorization: `Bearer ${token}` },
    {
      method: 'POST',
      refusal: (body) => {
        const answer = body as { ok?: unknown; error?: unknown };
        return answer.ok === true ? null : typeof answer.error === 'string' ? answer.error : 'not accepted';
      },
    },
  );
}

/** The running inbound side of one Slack app, with the ingress the routes and tests reach. */
export type SlackInbound = InboundHandle & { ingress: SlackIngress; signingSecret: string | undefined };

/**
 * Slack behind the platform contract: each Slack app an account (SLACK_BOT_TOKEN's is `default`,
 * HERALD_PLATFORMS_FILE's `slack:` entries the others), each with its own Web API client for sends
 * and its own ways in: Socket Mode (its app token, one socket per app under a lease) and the Events
 * API routes (its signing secret), either or both. The routes are one URL for every app.
 * Targets are `slack:<channel>[:<thread_ts>]`, or `slack@<account>:<channel>` for another app.
 */
export const slackAdapter: PlatformAdapter<SlackConfig, SlackInbound> = defineAdapter({
  name: 'slack',
  facts: PLATFORM_FACTS.slack,
  settings: (platforms) => platforms.slack,
  accounts: (platforms) => platforms.accounts.slack,
  createSender: (settings) => SlackSender.fromConfig(settings),
  async startInbound(settings, deps, logger) {
    if (settings.allowedUsers.length === 0) {
      logger.warn({}, 'SLACK_ALLOWED_USERS is empty: everyone gets the allowlist refusal (use * to allow everyone)');
    }
    if (settings.appToken === undefined && settings.signingSecret === undefined) {
      logger.warn(
        {},
        'this Slack app has neither an app token nor a signing secret (SLACK_APP_TOKEN, SLACK_SIGNING_SECRET; app_token_env, signing_secret_env): it can be posted to, but nothing is heard from it',
      );
    }
    const ingress = new SlackIngress({ config: settings, ...deps, logger });
    const socket = settings.appToken === undefined ? undefined : ingress.startSocketMode(settings.appToken);
    return { ingress, signingSecret: settings.signingSecret, stop: async () => socket?.stop() };
  },
  joinWebhooks(started) {
    const apps = started.flatMap(({ ingress, signingSecret }) => (signingSecret === undefined ? [] : [{ ingress, signingSecret }]));
    return apps.length === 0 ? [] : slackWebhooks(apps);
  },
  parseTarget: (text) => parseNamedChat(/^slack[@:]/i.test(text) ? text : `slack:${text}`),
  formatTarget: (chat) => formatNamedChat({ platform: 'slack', ...chat }),
  readTarget: readStoredTarget,
  // No verifyWebhook: Slack's signature covers the raw body, so its routes check it themselves
  // (slack-webhooks.ts), before anything of the request is read.
  checkToken: checkSlackToken,
  rateLimits: { maxMessageChars: SLACK_LIMIT, backoff: '429 with Retry-After per method; calls spaced per method and channel' },
  lease: 'one-connection-per-account',
});
