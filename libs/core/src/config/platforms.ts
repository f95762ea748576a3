import { z } from 'zod';
import { checkMailAddress } from '../mail-address.ts';
import { commaList, integer, oneOf, optionalText, url } from './fields.ts';

export interface TelegramConfig {
  botToken: string;
  mode: 'webhook' | 'polling';
  /** Required in webhook mode: Telegram sends it in X-Telegram-Bot-Api-Secret-Token. */
  webhookSecret: string | undefined;
  /** When set, ingress registers this URL with setWebhook at start. */
  webhookUrl: string | undefined;
  /** User ids or @usernames; ['*'] allows everyone; empty allows no one. */
  allowedUsers: string[];
  apiRoot: string;
  /** Long-poll wait per getUpdates call. */
  pollTimeoutSeconds: number;
}

export interface DiscordConfig {
  botToken: string;
  /** User ids; ['*'] allows everyone; empty allows no one. */
  allowedUsers: string[];
  /** REST base URL (without the /v10 version); the gateway URL comes from GET /gateway/bot. */
  apiBase: string;
}

/** Cron reports by e-mail (docs/platforms.md, "E-mail"). */
export interface EmailConfig {
  /** smtp:// or smtps:// with user and password in it: a secret, never logged or printed. */
  smtpUrl: string;
  /** The From of every report: an address, or `Name <address>`. */
  from: string;
}

export interface SlackConfig {
  /** xoxb-: the Web API calls (posting, editing, reactions, users.info). */
  botToken: string;
  /** xapp-: Socket Mode; when set, one ingress replica holds the socket under a lease. */
  appToken: string | undefined;
  /** Verifies the Events API's and interactions' X-Slack-Signature; without it those routes are off. */
  signingSecret: string | undefined;
  /** User ids (U...); ['*'] allows everyone; empty allows no one. */
  allowedUsers: string[];
  /** Channel ids (C..., G...); empty allows every channel the bot is in. DMs are not channels here. */
  allowedChannels: string[];
  /** The Web API base, with a trailing slash (https://slack.com/api/); tests point it at a fake. */
  apiUrl: string;
}

/** The chat platforms: each is null when its bot token is not set. */
export interface PlatformsConfig {
  telegram: TelegramConfig | null;
  discord: DiscordConfig | null;
  /** Null when HERALD_SMTP_URL is not set: e-mail targets are accepted, their rows wait. */
  email: EmailConfig | null;
  /** HERALD_MAIL_ALLOWED_DOMAINS: the domains reports may be mailed to (and below them); empty: any. */
  mailAllowedDomains: string[];
  slack: SlackConfig | null;
  /** How often the delivery consumer looks at the outbox without a notice. */
  deliveryPollMs: number;
  /**
   * Whether each platform's chats see answers grow by edits while they are written
   * (HERALD_STREAMING_<PLATFORM>; HERALD_STREAMING=off turns them all off, libs/core config/model.ts).
   */
  streaming: { telegram: boolean; discord: boolean };
}

const platformsEnv = z.object({
  TELEGRAM_BOT_TOKEN: optionalText.refine((value) => value === undefined || /^\d+:[A-Za-z0-9_-]+$/.test(value), {
    error: 'expected a bot token like 123456:ABC-def from @BotFather',
  }),
  TELEGRAM_MODE: oneOf(['webhook', 'polling']).default('polling'),
  TELEGRAM_WEBHOOK_SECRET: optionalText.refine((value) => value === undefined || /^[A-Za-z0-9_-]{1,256}$/.test(value), {
    error: 'expected 1-256 characters of A-Z, a-z, 0-9, _ and -',
  }),
  TELEGRAM_WEBHOOK_URL: optionalText.pipe(url(/^https?:$/, 'https://herald.example.com/telegram/webhook').optional()),
  TELEGRAM_ALLOWED_USERS: commaList,
  TELEGRAM_API_ROOT: url(/^https?:$/, 'https://api.telegram.org').default('https://api.telegram.org'),
  TELEGRAM_POLL_TIMEOUT_SECONDS: integer(0, 50).default(25),
  DISCORD_BOT_TOKEN: optionalText,
  DISCORD_ALLOWED_USERS: commaList,
  DISCORD_API_BASE: url(/^https?:$/, 'https://discord.com/api').default('https://discord.com/api'),
  SLACK_BOT_TOKEN: optionalText.refine((value) => value === undefined || /^xoxb-[A-Za-z0-9-]+$/.test(value), { error: 'expected a bot token starting xoxb-' }),
  SLACK_APP_TOKEN: optionalText.refine((value) => value === undefined || /^xapp-[A-Za-z0-9-]+$/.test(value), { error: 'expected an app-level token starting xapp-' }),
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_ALLOWED_USERS: commaList,
  SLACK_ALLOWED_CHANNELS: commaList,
  SLACK_API_URL: url(/^https?:$/, 'https://slack.com/api/').default('https://slack.com/api/'),
  HERALD_DELIVERY_POLL_MS: integer(10, 60_000).default(1000),
  HERALD_SMTP_URL: optionalText.pipe(url(/^smtps?:$/, 'smtps://user:password@smtp.example.com:465').optional()),
  HERALD_MAIL_FROM: optionalText,
  HERALD_MAIL_ALLOWED_DOMAINS: commaList.refine((domains) => domains.every((domain) => /^\.?([a-z0-9-]+\.)+[a-z0-9-]+$/i.test(domain)), {
    error: 'expected domain names, comma-separated (example.com,ops.example.org)',
  }),
  HERALD_STREAMING_TELEGRAM: oneOf(['on', 'off'] as const).default('on'),
  HERALD_STREAMING_DISCORD: oneOf(['on', 'off'] as const).default('on'),
});

type PlatformsEnv = z.output<typeof platformsEnv>;

function telegram(e: PlatformsEnv): TelegramConfig | null {
  if (e.TELEGRAM_BOT_TOKEN === undefined) return null;
  return {
    botToken: e.TELEGRAM_BOT_TOKEN,
    mode: e.TELEGRAM_MODE,
    webhookSecret: e.TELEGRAM_WEBHOOK_SECRET,
    webhookUrl: e.TELEGRAM_WEBHOOK_URL,
    allowedUsers: e.TELEGRAM_ALLOWED_USERS,
    apiRoot: e.TELEGRAM_API_ROOT.replace(/\/+$/, ''),
    pollTimeoutSeconds: e.TELEGRAM_POLL_TIMEOUT_SECONDS,
  };
}

function discord(e: PlatformsEnv): DiscordConfig | null {
  if (e.DISCORD_BOT_TOKEN === undefined) return null;
  return { botToken: e.DISCORD_BOT_TOKEN, allowedUsers: e.DISCORD_ALLOWED_USERS, apiBase: e.DISCORD_API_BASE.replace(/\/+$/, '') };
}

function email(e: PlatformsEnv): EmailConfig | null {
  if (e.HERALD_SMTP_URL === undefined || e.HERALD_MAIL_FROM === undefined) return null;
  return { smtpUrl: e.HERALD_SMTP_URL, from: e.HERALD_MAIL_FROM };
}

/** A From that is an address, or `Name <address>`: what the SMTP envelope's sender is read from. */
function fromAddress(from: string): string | undefined {
  const named = /^[^<>\r\n]*<([^<>\s]+)>$/.exec(from);
  const address = named ? (named[1] ?? '') : from;
  const check = checkMailAddress(address);
  return 'address' in check ? check.address : undefined;
}

function checkMail(e: PlatformsEnv, context: z.RefinementCtx): void {
  if (e.HERALD_SMTP_URL !== undefined && e.HERALD_MAIL_FROM === undefined) {
    context.addIssue({ code: 'custom', path: ['HERALD_MAIL_FROM'], message: 'required when HERALD_SMTP_URL is set (reports@example.com or Herald <reports@example.com>)' });
  }
  if (e.HERALD_MAIL_FROM !== undefined && fromAddress(e.HERALD_MAIL_FROM) === undefined) {
    context.addIssue({ code: 'custom', path: ['HERALD_MAIL_FROM'], message: 'expected an address like reports@example.com or Herald <reports@example.com>' });
  }
}

function slack(e: PlatformsEnv): SlackConfig | null {
  if (e.SLACK_BOT_TOKEN === undefined) return null;
  return {
    botToken: e.SLACK_BOT_TOKEN,
    appToken: e.SLACK_APP_TOKEN,
    signingSecret: e.SLACK_SIGNING_SECRET,
    allowedUsers: e.SLACK_ALLOWED_USERS,
    allowedChannels: e.SLACK_ALLOWED_CHANNELS,
    apiUrl: `${e.SLACK_API_URL.replace(/\/+$/, '')}/`,
  };
}

export const platformsSection = platformsEnv
  .superRefine(checkMail)
  .superRefine((e, context) => {
    // Without the secret anyone who finds the webhook URL could post forged updates.
    if (e.TELEGRAM_BOT_TOKEN === undefined || e.TELEGRAM_MODE !== 'webhook' || e.TELEGRAM_WEBHOOK_SECRET !== undefined) return;
    context.addIssue({
      code: 'custom',
      path: ['TELEGRAM_WEBHOOK_SECRET'],
      message: 'required when TELEGRAM_MODE is webhook (any 1-256 of A-Z a-z 0-9 _ -)',
    });
  })
  .superRefine((e, context) => {
    // A bot token alone can post (cron reports) but hears nothing: say so only if the way in is half-set.
    if (e.SLACK_BOT_TOKEN !== undefined || (e.SLACK_APP_TOKEN === undefined && e.SLACK_SIGNING_SECRET === undefined)) return;
    context.addIssue({ code: 'custom', path: ['SLACK_BOT_TOKEN'], message: 'required when SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set (xoxb-...)' });
  })
  .transform(
    (e): PlatformsConfig => ({
      telegram: telegram(e),
      discord: discord(e),
      slack: slack(e),
      email: email(e),
      mailAllowedDomains: e.HERALD_MAIL_ALLOWED_DOMAINS.map((domain) => domain.toLowerCase().replace(/^\./, '')),
      deliveryPollMs: e.HERALD_DELIVERY_POLL_MS,
      streaming: { telegram: e.HERALD_STREAMING_TELEGRAM === 'on', discord: e.HERALD_STREAMING_DISCORD === 'on' },
    }),
  );
