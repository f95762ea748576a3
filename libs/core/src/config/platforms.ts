import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { checkMailAddress } from '../mail-address.ts';
import { ACCOUNT_NAME } from '../delivery-target.ts';
import { DEFAULT_ACCOUNT } from '../platform-registry.ts';
import { commaList, integer, oneOf, optionalText, url } from './fields.ts';

export interface TelegramConfig {
  /** The account (bot) this is: `default` for TELEGRAM_BOT_TOKEN, else its name in HERALD_PLATFORMS_FILE. */
  account?: string | undefined;
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
  /** The account (bot) this is: `default` for DISCORD_BOT_TOKEN, else its name in HERALD_PLATFORMS_FILE. */
  account?: string | undefined;
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
  /** The account (Slack app) this is: `default` for SLACK_BOT_TOKEN, else its name in HERALD_PLATFORMS_FILE. */
  account?: string | undefined;
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

/**
 * The accounts of every chat platform by name (`default` where the platform's own token is set):
 * what a delivery target's `@account` may name here, checked when a cron job is saved.
 */
export function platformAccountNames(platforms: PlatformsConfig): Readonly<Record<string, readonly string[]>> {
  const accounts: Readonly<Record<string, readonly { account?: string | undefined }[]>> = platforms.accounts;
  return Object.fromEntries(Object.entries(accounts).map(([platform, list]) => [platform, list.map((account) => account.account ?? DEFAULT_ACCOUNT)]));
}

/** The chat platforms: each is null when its bot token is not set. */
export interface PlatformsConfig {
  /** The default Telegram account (TELEGRAM_BOT_TOKEN), null when it is not set. */
  telegram: TelegramConfig | null;
  /** The default Discord account (DISCORD_BOT_TOKEN), null when it is not set. */
  discord: DiscordConfig | null;
  /** Null when HERALD_SMTP_URL is not set: e-mail targets are accepted, their rows wait. */
  email: EmailConfig | null;
  /** HERALD_MAIL_ALLOWED_DOMAINS: the domains reports may be mailed to (and below them); empty: any. */
  mailAllowedDomains: string[];
  slack: SlackConfig | null;
  /** Every account of each platform: the default one first when set, then HERALD_PLATFORMS_FILE's. */
  accounts: { telegram: TelegramConfig[]; discord: DiscordConfig[]; slack: SlackConfig[] };
  /** HERALD_PLATFORMS_FILE: more bots per platform (docs/configuration.md#platform-accounts). */
  platformsFile: string | undefined;
  /** How often the delivery consumer looks at the outbox without a notice. */
  deliveryPollMs: number;
  /**
   * Whether each platform's chats see answers grow by edits while they are written
   * (HERALD_STREAMING_<PLATFORM>; HERALD_STREAMING=off turns them all off, libs/core config/model.ts).
   */
  streaming: { telegram: boolean; discord: boolean; slack: boolean };
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
  HERALD_STREAMING_SLACK: oneOf(['on', 'off'] as const).default('on'),
  HERALD_PLATFORMS_FILE: optionalText,
});

type PlatformsEnv = z.output<typeof platformsEnv>;

function telegram(e: PlatformsEnv): TelegramConfig | null {
  if (e.TELEGRAM_BOT_TOKEN === undefined) return null;
  return {
    account: DEFAULT_ACCOUNT,
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
  return { account: DEFAULT_ACCOUNT, botToken: e.DISCORD_BOT_TOKEN, allowedUsers: e.DISCORD_ALLOWED_USERS, apiBase: e.DISCORD_API_BASE.replace(/\/+$/, '') };
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
    account: DEFAULT_ACCOUNT,
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
  .transform((e): PlatformsConfig => {
    const defaults = { telegram: telegram(e), discord: discord(e), slack: slack(e) };
    return {
      ...defaults,
      email: email(e),
      mailAllowedDomains: e.HERALD_MAIL_ALLOWED_DOMAINS.map((domain) => domain.toLowerCase().replace(/^\./, '')),
      accounts: { telegram: defaults.telegram ? [defaults.telegram] : [], discord: defaults.discord ? [defaults.discord] : [], slack: defaults.slack ? [defaults.slack] : [] },
      platformsFile: e.HERALD_PLATFORMS_FILE,
      deliveryPollMs: e.HERALD_DELIVERY_POLL_MS,
      streaming: { telegram: e.HERALD_STREAMING_TELEGRAM === 'on', discord: e.HERALD_STREAMING_DISCORD === 'on', slack: e.HERALD_STREAMING_SLACK === 'on' },
    };
  });

// HERALD_PLATFORMS_FILE (docs/configuration.md#platform-accounts): more bots per platform, each an
// account with its own token (named by variable: secrets stay in the environment) and allowlist.
// One entry shape for every platform, extended by what a platform needs beyond a token; a
// platform added to the registry adds its key here.

const accountEntry = z.strictObject({
  account: z.string().regex(ACCOUNT_NAME, { error: 'expected an account name: lowercase letters, digits, - and _' }),
  token_env: z.string().regex(/^[A-Z_][A-Z0-9_]{0,127}$/, { error: 'expected an environment variable name such as TELEGRAM_OPS_TOKEN' }),
  /** User ids or @handles; '*' allows everyone; unset: the platform's allowlist (TELEGRAM_ALLOWED_USERS...). */
  allowed_users: z.union([z.array(z.string().trim().min(1)), z.string()]).optional(),
});

const envName = (example: string) => z.string().regex(/^[A-Z_][A-Z0-9_]{0,127}$/, { error: `expected an environment variable name such as ${example}` });

/** A Slack app: its bot token (token_env), and its ways in, each optional: Socket Mode's app token, the Events API's signing secret. */
const slackEntry = accountEntry.extend({
  app_token_env: envName('SLACK_RESEARCH_APP_TOKEN').optional(),
  signing_secret_env: envName('SLACK_RESEARCH_SIGNING_SECRET').optional(),
  /** Channel ids; unset: SLACK_ALLOWED_CHANNELS. */
  allowed_channels: z.union([z.array(z.string().trim().min(1)), z.string()]).optional(),
  api_url: url(/^https?:$/, 'https://slack.com/api/').optional(),
});

const platformsDocument = z.strictObject({
  telegram: z.array(accountEntry.extend({ api_root: url(/^https?:$/, 'https://api.telegram.org').optional() })).optional(),
  discord: z.array(accountEntry.extend({ api_base: url(/^https?:$/, 'https://discord.com/api').optional() })).optional(),
  slack: z.array(slackEntry).optional(),
});

type AccountEntry = z.infer<typeof accountEntry>;

/** A platforms file that cannot be used: the message names the variable, the file and the field. */
export class PlatformsFileError extends Error {
  override readonly name = 'PlatformsFileError';
}

function readPlatformsDocument(path: string): z.infer<typeof platformsDocument> {
  const source = `HERALD_PLATFORMS_FILE (${path})`;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new PlatformsFileError(`${source}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new PlatformsFileError(`${source}: not YAML or JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const parsed = platformsDocument.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field =
      issue?.path
        .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
        .join('')
        .replace(/^\./, '') || 'the file';
    throw new PlatformsFileError(`${source}: ${field}: ${issue?.message ?? 'is invalid'}`);
  }
  return parsed.data;
}

/** One entry's token and allowlist, checked: the variable must be set, the bot not another account's. */
function entryBasics(entry: AccountEntry, field: string, env: Readonly<Record<string, string | undefined>>, taken: Map<string, string>, fallbackAllowed: string[]) {
  const source = 'HERALD_PLATFORMS_FILE';
  if (entry.account === DEFAULT_ACCOUNT && taken.has(DEFAULT_ACCOUNT)) {
    throw new PlatformsFileError(`${source}: ${field}.account: duplicate account 'default' (the bot token variable of the platform is already the default account)`);
  }
  if (taken.has(entry.account)) throw new PlatformsFileError(`${source}: ${field}.account: duplicate account '${entry.account}'`);
  const token = env[entry.token_env]?.trim();
  if (!token) throw new PlatformsFileError(`${source}: ${field}.token_env: the variable ${entry.token_env} is not set`);
  const twin = [...taken.entries()].find(([, other]) => other === token)?.[0];
  if (twin !== undefined) throw new PlatformsFileError(`${source}: ${field}.token_env: ${entry.token_env} is the same bot as account '${twin}'`);
  taken.set(entry.account, token);
  return { token, allowed: listOf(entry.allowed_users, fallbackAllowed) };
}

/** A list field of the file: a list or a comma-separated string; unset, the platform variable's list. */
function listOf(value: string | string[] | undefined, fallback: string[]): string[] {
  if (value === undefined) return fallback;
  return (typeof value === 'string' ? value.split(',') : value).map((item) => item.trim()).filter((item) => item !== '');
}

/**
 * A second secret of a Slack app (its app token, its signing secret): the variable must be set and
 * hold no other account's, since one socket lease is held per app and a signed request is given to
 * the app whose secret signed it (docs/decisions/2026-12-06-slack-apps.md).
 */
function slackSecret(variable: string | undefined, field: string, env: Readonly<Record<string, string | undefined>>, taken: Map<string, string>, account: string): string | undefined {
  if (variable === undefined) return undefined;
  const value = env[variable]?.trim();
  if (!value) throw new PlatformsFileError(`HERALD_PLATFORMS_FILE: ${field}: the variable ${variable} is not set`);
  const appToken = field.endsWith('.app_token_env');
  if (appToken && !/^xapp-[A-Za-z0-9-]+$/.test(value)) throw new PlatformsFileError(`HERALD_PLATFORMS_FILE: ${field}: ${variable} is not an app-level token starting xapp-`);
  // Two app tokens of one app (xapp-1-<app id>-...) would share its socket lease: one app, one account.
  const key = appToken ? slackAppIdOf(value) : value;
  const twin = [...taken.entries()].find(([, other]) => other === key)?.[0];
  if (twin !== undefined) throw new PlatformsFileError(`HERALD_PLATFORMS_FILE: ${field}: ${variable} is ${appToken ? 'the same Slack app' : 'the same signing secret'} as account '${twin}'`);
  taken.set(account, key);
  return value;
}

/** The app id inside an app-level token (`xapp-1-A0123-...`): what its socket lease is named by. */
export function slackAppIdOf(appToken: string): string {
  return appToken.split('-')[2] ?? appToken;
}

/** HERALD_PLATFORMS_FILE's Slack apps, after the default one (SLACK_BOT_TOKEN...). */
function slackAccounts(entries: readonly z.infer<typeof slackEntry>[], platforms: PlatformsConfig, env: Readonly<Record<string, string | undefined>>): SlackConfig[] {
  const defaults = platforms.accounts.slack;
  const taken = new Map(defaults.map((account) => [account.account ?? DEFAULT_ACCOUNT, account.botToken]));
  const appTokens = new Map(defaults.flatMap((account) => (account.appToken === undefined ? [] : [[account.account ?? DEFAULT_ACCOUNT, slackAppIdOf(account.appToken)] as const])));
  const secrets = new Map(defaults.flatMap((account) => (account.signingSecret === undefined ? [] : [[account.account ?? DEFAULT_ACCOUNT, account.signingSecret] as const])));
  return entries.map((entry, index): SlackConfig => {
    const field = `slack[${index}]`;
    const { token, allowed } = entryBasics(entry, field, env, taken, commaList.parse(env.SLACK_ALLOWED_USERS));
    if (!/^xoxb-[A-Za-z0-9-]+$/.test(token)) throw new PlatformsFileError(`HERALD_PLATFORMS_FILE: ${field}.token_env: ${entry.token_env} is not a bot token starting xoxb-`);
    const base = entry.api_url ?? env.SLACK_API_URL ?? 'https://slack.com/api/';
    return {
      account: entry.account,
      botToken: token,
      appToken: slackSecret(entry.app_token_env, `${field}.app_token_env`, env, appTokens, entry.account),
      signingSecret: slackSecret(entry.signing_secret_env, `${field}.signing_secret_env`, env, secrets, entry.account),
      allowedUsers: allowed,
      allowedChannels: listOf(entry.allowed_channels, commaList.parse(env.SLACK_ALLOWED_CHANNELS)),
      apiUrl: `${base.replace(/\/+$/, '')}/`,
    };
  });
}

/**
 * The config with HERALD_PLATFORMS_FILE's accounts added after the default ones. Everything is
 * checked now, at start, with the field named: the file's shape, a duplicate account (or the same
 * bot twice), a token variable that is not set; for a Slack app also its app token and signing
 * secret, neither another app's. Telegram's named accounts poll (the webhook is the default
 * account's); each takes the default's API root and poll timeout unless told.
 */
export function withPlatformAccounts(platforms: PlatformsConfig, env: Readonly<Record<string, string | undefined>>): PlatformsConfig {
  if (platforms.platformsFile === undefined) return platforms;
  const document = readPlatformsDocument(platforms.platformsFile);
  const telegramTaken = new Map(platforms.accounts.telegram.map((account) => [account.account ?? DEFAULT_ACCOUNT, account.botToken]));
  const discordTaken = new Map(platforms.accounts.discord.map((account) => [account.account ?? DEFAULT_ACCOUNT, account.botToken]));
  const telegramAccounts = (document.telegram ?? []).map((entry, index): TelegramConfig => {
    const { token, allowed } = entryBasics(entry, `telegram[${index}]`, env, telegramTaken, commaList.parse(env.TELEGRAM_ALLOWED_USERS));
    if (!/^\d+:[A-Za-z0-9_-]+$/.test(token))
      throw new PlatformsFileError(`HERALD_PLATFORMS_FILE: telegram[${index}].token_env: ${entry.token_env} is not a bot token like 123456:ABC-def from @BotFather`);
    const root = entry.api_root ?? env.TELEGRAM_API_ROOT ?? 'https://api.telegram.org';
    const timeout = Number(env.TELEGRAM_POLL_TIMEOUT_SECONDS ?? 25);
    return {
      account: entry.account,
      botToken: token,
      mode: 'polling',
      webhookSecret: undefined,
      webhookUrl: undefined,
      allowedUsers: allowed,
      apiRoot: root.replace(/\/+$/, ''),
      pollTimeoutSeconds: Number.isInteger(timeout) ? timeout : 25,
    };
  });
  const discordAccounts = (document.discord ?? []).map((entry, index): DiscordConfig => {
    const { token, allowed } = entryBasics(entry, `discord[${index}]`, env, discordTaken, commaList.parse(env.DISCORD_ALLOWED_USERS));
    const base = entry.api_base ?? env.DISCORD_API_BASE ?? 'https://discord.com/api';
    return { account: entry.account, botToken: token, allowedUsers: allowed, apiBase: base.replace(/\/+$/, '') };
  });
  const slackApps = slackAccounts(document.slack ?? [], platforms, env);
  return {
    ...platforms,
    accounts: { telegram: [...platforms.accounts.telegram, ...telegramAccounts], discord: [...platforms.accounts.discord, ...discordAccounts], slack: [...platforms.accounts.slack, ...slackApps] },
  };
}
