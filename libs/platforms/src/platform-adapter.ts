import { DEFAULT_ACCOUNT } from '@herald/core';
import type { ChatPlatform, DeliveryOnlyFacts, DeliveryOnlyPlatform, DeliveryTarget, Logger, NamedChat, PlatformFacts, PlatformsConfig } from '@herald/core';
import type { OutboundSender } from '@herald/delivery';
import type { ChatInboundDependencies } from './chat-inbound.ts';
import { AccountSender } from './account-sender.ts';
import type { TokenCheck } from './token-check.ts';

/** What every platform's inbound side is given: the shared inbox path, minus its own allowlist. */
export type InboundDependencies = Omit<ChatInboundDependencies, 'allowedUsers'> & { owner: string };

/** What a platform webhook answers: the status and JSON body the ingress sends back. */
export interface WebhookAnswer {
  status: number;
  body: Record<string, unknown>;
  /** Headers to send with it (Telegram's `x-herald-delivery-accepted: durable`). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * An HTTP route a platform takes its events on (Telegram's webhook, Slack's Events API), served by the ingress with
 * the body's raw bytes, which signatures are computed over. It checks its own signature; a storage
 * outage is thrown and answered 503, so the platform delivers again.
 */
export interface PlatformWebhook {
  path: string;
  summary: string;
  handle(rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): Promise<WebhookAnswer>;
}

/** A platform's running inbound side: stop it at shutdown. */
export interface InboundHandle {
  stop(): Promise<void>;
  /** The webhook routes it serves, when it takes events over HTTP. */
  webhooks?: readonly PlatformWebhook[];
}

/**
 * One platform behind one contract (docs/decisions/2026-12-05-platform-contract.md). Each
 * `libs/platforms/src/<name>/` folder exports one of these; the rest of Herald reaches a platform
 * only through it (the registry, platform-registry.ts in @herald/core, for names and facts).
 *
 * - inbound: `startInbound` turns the platform's updates into the normalised chat message
 *   (chat-inbound.ts: identity qualified by platform and account) and commits them;
 * - outbound: `createSender` sends, edits the in-flight part, shows typing, puts buttons under a
 *   wait's notice (an OutboundSender of @herald/delivery);
 * - the delivery-target syntax it owns: `parseTarget` / `formatTarget` for the text form,
 *   `readTarget` to validate a stored one;
 * - `verifyWebhook`: its webhook's secret or signature check, when it takes webhooks;
 * - `rateLimits`: what its sender keeps to; `lease`: whether one account's connection (a poller,
 *   a gateway socket) must be held by one process at a time.
 */
/** What every platform's settings say about the account (bot) they are; unset: `default`. */
export interface AccountSettings {
  account?: string | undefined;
}

export interface PlatformAdapterSpec<Settings extends AccountSettings, Inbound extends InboundHandle = InboundHandle> {
  readonly name: ChatPlatform;
  readonly facts: PlatformFacts;
  /** Its default account's settings, or null when this deployment has no such bot. */
  settings(platforms: PlatformsConfig): Settings | null;
  /**
   * Every account's settings (HERALD_PLATFORMS_FILE, docs/configuration.md#platform-accounts): each
   * gets its own sender and inbound side (its own lease). Unset: the default account alone.
   */
  accounts?(platforms: PlatformsConfig): Settings[];
  createSender(settings: Settings): OutboundSender;
  startInbound(settings: Settings, deps: InboundDependencies, logger: Logger): Promise<Inbound>;
  /**
   * The webhook routes of all its accounts at once, when one route serves them all (Slack's Events
   * API: one URL, each app's requests signed with its own secret). Unset: each account's own routes.
   */
  joinWebhooks?(started: readonly Inbound[]): PlatformWebhook[];
  parseTarget(text: string): NamedChat;
  formatTarget(chat: Omit<NamedChat, 'platform'>): string;
  readTarget(stored: Readonly<Record<string, string>>): DeliveryTarget | undefined;
  verifyWebhook?(settings: Settings, headers: Readonly<Record<string, string | string[] | undefined>>): boolean;
  /**
   * Registers the chat commands with the platform (its facts' `slashCommands`), with the default
   * account's settings; returns how many. Throws, naming the setting, when the platform has no bot.
   */
  deployCommands?(platforms: PlatformsConfig): Promise<number>;
  /**
   * Asks the platform whether it knows this token (`herald init`, for each of its facts'
   * `setupTokens`, named by `variable`); `env` may point the check at another API root (a test's fake).
   */
  checkToken?(token: string, env: Readonly<Record<string, string | undefined>>, variable: string): Promise<TokenCheck>;
  readonly rateLimits: RateLimitRules;
  readonly lease: 'one-connection-per-account' | 'none';
}

/** What the rest of Herald calls, with the settings picked from the config: none of it is platform-typed. */
export interface ConfiguredCalls<Inbound extends InboundHandle = InboundHandle> {
  /** The sender when the platform is configured. */
  senderFor(platforms: PlatformsConfig): OutboundSender | undefined;
  /** Starts the inbound side when the platform is configured. */
  startFor(platforms: PlatformsConfig, deps: InboundDependencies, logger: Logger): Promise<Inbound | undefined>;
}

export type PlatformAdapter<Settings extends AccountSettings, Inbound extends InboundHandle = InboundHandle> = PlatformAdapterSpec<Settings, Inbound> & ConfiguredCalls<Inbound>;

/** The part of an adapter that does not depend on its settings' type: what a registry holds. */
export type AnyPlatformAdapter = Omit<PlatformAdapterSpec<never>, 'settings' | 'accounts' | 'createSender' | 'startInbound' | 'joinWebhooks' | 'verifyWebhook'> & ConfiguredCalls;

const accountOf = (settings: AccountSettings): string => settings.account ?? DEFAULT_ACCOUNT;

/** An adapter from its spec, with the calls that pick its accounts' settings out of the config. */
export function defineAdapter<Settings extends AccountSettings, Inbound extends InboundHandle>(spec: PlatformAdapterSpec<Settings, Inbound>): PlatformAdapter<Settings, Inbound> {
  const accounts = (platforms: PlatformsConfig): Settings[] => {
    if (spec.accounts) return spec.accounts(platforms);
    const settings = spec.settings(platforms);
    return settings === null ? [] : [settings];
  };
  return {
    ...spec,
    senderFor(platforms) {
      const all = accounts(platforms);
      if (all.length === 0) return undefined;
      const only = all[0];
      if (all.length === 1 && only !== undefined && accountOf(only) === DEFAULT_ACCOUNT) return spec.createSender(only);
      return new AccountSender(spec.name, new Map(all.map((settings) => [accountOf(settings), spec.createSender(settings)])));
    },
    async startFor(platforms, deps, logger) {
      const started: Inbound[] = [];
      for (const settings of accounts(platforms)) {
        const account = accountOf(settings);
        const log = account === DEFAULT_ACCOUNT ? logger : logger.child({ account });
        started.push(await spec.startInbound(settings, { ...deps, account, logger: log }, log));
      }
      const first = started[0];
      if (first === undefined) return undefined;
      // The first is the default account's when there is one (Telegram's webhook); stopping stops all.
      const webhooks = spec.joinWebhooks ? spec.joinWebhooks(started) : started.flatMap((inbound) => inbound.webhooks ?? []);
      return { ...first, webhooks, stop: async () => void (await Promise.all(started.map((inbound) => inbound.stop()))) };
    },
  };
}

export interface RateLimitRules {
  /** The longest text of one message; longer replies are split (markdown-split.ts). */
  maxMessageChars: number;
  /** How the platform says "slow down", which the sender turns into a retry after that long. */
  backoff: string;
}

/**
 * A platform Herald only delivers to (e-mail): the outbound half of the contract. It has no
 * inbound side, no webhooks and no connection to hold; its target syntax is read where cron jobs
 * are saved, through the registry's DeliveryOnlyFacts, so the adapter only reads stored targets.
 */
export interface DeliveryAdapterSpec<Settings> {
  readonly name: DeliveryOnlyPlatform;
  readonly facts: DeliveryOnlyFacts;
  /** Its settings, or null when this deployment does not send there. */
  settings(platforms: PlatformsConfig): Settings | null;
  createSender(settings: Settings): OutboundSender;
  formatTarget(chat: Pick<NamedChat, 'chatId'>): string;
  readTarget(stored: Readonly<Record<string, string>>): DeliveryTarget | undefined;
  readonly rateLimits: RateLimitRules;
}

export type DeliveryAdapter<Settings> = DeliveryAdapterSpec<Settings> & Pick<ConfiguredCalls, 'senderFor'>;

/** What the registry of delivery-only adapters holds. */
export type AnyDeliveryAdapter = Omit<DeliveryAdapterSpec<never>, 'settings' | 'createSender'> & Pick<ConfiguredCalls, 'senderFor'>;

export function defineDeliveryAdapter<Settings>(spec: DeliveryAdapterSpec<Settings>): DeliveryAdapter<Settings> {
  return {
    ...spec,
    senderFor(platforms) {
      const settings = spec.settings(platforms);
      return settings === null ? undefined : spec.createSender(settings);
    },
  };
}
