/**
 * The one file outside libs/platforms that names the platforms (test/platform-names.test.ts holds
 * every other source file to that): what the rest of the code may ask about a platform without
 * loading its adapter. A platform's behaviour (inbound, outbound, webhooks, rate limits) lives in
 * its folder under libs/platforms behind the PlatformAdapter contract; this is only its name and
 * the facts that decide routing. Adding a platform adds an entry here and a folder there.
 */

import { checkMailAddress, mailDomainAllowed } from './mail-address.ts';
import type { MailAddressCheck } from './mail-address.ts';

/** Platforms people talk to Herald on; each is also a platform of qualified user ids. */
export const CHAT_PLATFORMS = ['telegram', 'discord', 'slack'] as const;
export type ChatPlatform = (typeof CHAT_PLATFORMS)[number];

/** The HTTP API (and `herald chat`): a platform of people, with no chat to deliver to. */
export const API_PLATFORM = 'api';

/** Single sign-on for the console: a person the OpenID provider vouched for is `oidc:<subject>`. */
export const SIGN_IN_PLATFORM = 'oidc';

/** Platforms whose people Herald knows; a person is `<platform>:<id>` (user-id.ts). */
export const PERSON_PLATFORMS = [...CHAT_PLATFORMS, API_PLATFORM, SIGN_IN_PLATFORM] as const;

/**
 * A platform account: one bot (one token) of a platform. The platform's own token variable is the
 * account `default`; HERALD_PLATFORMS_FILE names more. A route's identity (its session key) and a
 * delivery target are qualified by platform and account; a person's id is the platform's alone.
 */
export const DEFAULT_ACCOUNT = 'default';

/**
 * The dead-letter kind each chat platform records its failed inbound updates under. The CHECK on
 * dead_letters.source lists the same (libs/db's ALLOWED_VALUES reads them from here, and
 * libs/db/test/generated-types.test.ts holds them to the database): a new platform needs its kind
 * added there by a migration.
 */
const DEAD_LETTER_KINDS = { telegram: 'telegram_update', discord: 'discord_event', slack: 'slack_event' } as const satisfies Record<ChatPlatform, string>;
export type PlatformDeadLetterKind = (typeof DEAD_LETTER_KINDS)[ChatPlatform];

/** One token of a platform that `herald init` asks for (a prompt, or `--<flag>` without a terminal). */
export interface SetupToken {
  /** The setting it is written to in .env: the one the platform's settings read. */
  variable: string;
  /** Its `herald init` flag, without the dashes. */
  flag: string;
  /** Other flags taking the same token (the `--<platform>-token` every platform's first token answers to). */
  aliases?: readonly string[];
  /** What the prompt asks. */
  question: string;
  /** How checks name it: "the Telegram token: ok". */
  name: string;
  /** How every such token starts; another is refused before it is checked live. */
  prefix?: string;
  /** Another of the platform's variables it is used only with: asked, and taken, only when that one is given. */
  requires?: string;
}

export interface PlatformFacts {
  /** How its delivery target is written: `<platform>[@<account>]:<chat_id>[:<thread_id>]`. */
  targetSyntax: string;
  /**
   * How one account holds its connection: one poller or one gateway socket at a time, under a
   * lease; or Slack's Socket Mode socket (leased) beside its signed Events API requests.
   */
  connection: 'poller-or-webhook' | 'gateway' | 'socket-or-events';
  /** The dead-letter kind its failed inbound updates are recorded under (herald_dead_letters). */
  deadLetterKind: PlatformDeadLetterKind;
  /** The name people read (logs, the console). */
  label: string;
  /**
   * The public HTTP routes its events arrive on (each checks the platform's own secret or
   * signature), served from the adapter's PlatformWebhook.
   */
  eventRoutes: readonly string[];
  /** Its group chats have negative ids (Telegram's -100...): how a chat id alone says "group". */
  negativeIdIsGroup: boolean;
  /** A person's direct-message chat has their own user id as its chat id (Telegram's private chats). */
  dmChatIdIsUserId: boolean;
  /**
   * The tokens `herald init` asks for, in order, and writes to .env under the variables the
   * platform's settings read; the adapter checks each live (`checkToken`). Unset: set up by hand.
   */
  setupTokens?: readonly SetupToken[];
  /** Its chat commands are registered with it as slash commands, once per deployment: `herald <name>-commands`. */
  slashCommands: boolean;
  /** What the system prompt tells the model about how its replies are shown there; none: nothing. */
  promptHint?: string;
  /** The fields of its settings (config.platforms.<name>, each account's) that are secrets: never logged. */
  secretSettings: readonly string[];
  /** The request headers of its webhooks that carry a secret or a signature: never logged. */
  secretHeaders: readonly string[];
}

export const PLATFORM_FACTS: Readonly<Record<ChatPlatform, PlatformFacts>> = {
  telegram: {
    targetSyntax: 'telegram[@<account>]:<chat_id>[:<topic_id>]',
    connection: 'poller-or-webhook',
    deadLetterKind: DEAD_LETTER_KINDS.telegram,
    label: 'Telegram',
    eventRoutes: ['/telegram/webhook'],
    negativeIdIsGroup: true,
    dmChatIdIsUserId: true,
    secretSettings: ['botToken', 'webhookSecret'],
    secretHeaders: ['x-telegram-bot-api-secret-token'],
    slashCommands: false,
    setupTokens: [{ variable: 'TELEGRAM_BOT_TOKEN', flag: 'telegram-token', question: 'Telegram bot token', name: 'Telegram token' }],
    promptHint: 'Replies are shown in Telegram: keep them short, use simple Markdown.',
  },
  discord: {
    targetSyntax: 'discord[@<account>]:<channel_id>[:<thread_id>]',
    connection: 'gateway',
    deadLetterKind: DEAD_LETTER_KINDS.discord,
    label: 'Discord',
    eventRoutes: [],
    negativeIdIsGroup: false,
    dmChatIdIsUserId: false,
    secretSettings: ['botToken'],
    secretHeaders: [],
    slashCommands: true,
    setupTokens: [{ variable: 'DISCORD_BOT_TOKEN', flag: 'discord-token', question: 'Discord bot token', name: 'Discord token' }],
    promptHint: 'Replies are shown in Discord: Markdown works; keep messages under 2,000 characters.',
  },
  slack: {
    targetSyntax: 'slack[@<account>]:<channel>[:<thread_ts>]',
    connection: 'socket-or-events',
    deadLetterKind: DEAD_LETTER_KINDS.slack,
    label: 'Slack',
    eventRoutes: ['/v1/slack/events', '/v1/slack/interactions'],
    negativeIdIsGroup: false,
    dmChatIdIsUserId: false,
    secretSettings: ['botToken', 'appToken', 'signingSecret'],
    secretHeaders: ['x-slack-signature'],
    slashCommands: false,
    // The bot token sends; the app-level token opens Socket Mode, the way in that needs no public
    // URL. The signing secret (the Events API's way in) stays a setting set by hand.
    setupTokens: [
      { variable: 'SLACK_BOT_TOKEN', flag: 'slack-bot-token', aliases: ['slack-token'], question: 'Slack bot token', name: 'Slack bot token', prefix: 'xoxb-' },
      {
        variable: 'SLACK_APP_TOKEN',
        flag: 'slack-app-token',
        question: 'Slack app-level token for Socket Mode',
        name: 'Slack app token',
        prefix: 'xapp-',
        requires: 'SLACK_BOT_TOKEN',
      },
    ],
  },
};

/**
 * Platforms Herald only delivers to (cron reports): nobody talks to Herald there, so they have no
 * inbound side, no people and no sessions. Their targets name addresses, several at once.
 */
export const DELIVERY_ONLY_PLATFORMS = ['email'] as const;
export type DeliveryOnlyPlatform = (typeof DELIVERY_ONLY_PLATFORMS)[number];

export interface DeliveryOnlyFacts {
  /** How its delivery target is written. */
  targetSyntax: string;
  /** The name people read (logs, the console). */
  label: string;
  /** Reads one address of a target: its stored form (what is sent to), or why it is none. */
  readAddress(text: string): MailAddressCheck;
  /** Whether an address lies within the deployment's allowlist of it (empty: anywhere). */
  addressAllowed(address: string, allowlist: readonly string[]): boolean;
}

export const DELIVERY_ONLY_FACTS: Readonly<Record<DeliveryOnlyPlatform, DeliveryOnlyFacts>> = {
  email: { targetSyntax: 'email:<address>[,<address>...]', label: 'E-mail', readAddress: checkMailAddress, addressAllowed: mailDomainAllowed },
};

export function isDeliveryOnlyPlatform(platform: string): platform is DeliveryOnlyPlatform {
  return (DELIVERY_ONLY_PLATFORMS as readonly string[]).includes(platform);
}
/** Every chat platform's dead-letter kind, in the registry's order. */
export const PLATFORM_DEAD_LETTER_KINDS: readonly PlatformDeadLetterKind[] = CHAT_PLATFORMS.map((platform) => PLATFORM_FACTS[platform].deadLetterKind);

/** Every platform's event routes: public, their requests signed by the platform. */
export const PLATFORM_EVENT_ROUTES: readonly string[] = CHAT_PLATFORMS.flatMap((platform) => PLATFORM_FACTS[platform].eventRoutes);

/** How every chat platform's delivery target is written, for help texts and tool descriptions. */
export const CHAT_TARGET_SYNTAXES: readonly string[] = CHAT_PLATFORMS.map((platform) => PLATFORM_FACTS[platform].targetSyntax);

/** Whether replies to this platform's sessions leave through the outbox to a chat. */
export function isChatPlatform(platform: string): platform is ChatPlatform {
  return (CHAT_PLATFORMS as readonly string[]).includes(platform);
}
