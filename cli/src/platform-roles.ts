import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { CHAT_PLATFORMS, DELIVERY_ONLY_PLATFORMS } from '@herald/core';
import type { Config, Logger, Shutdown } from '@herald/core';
import { DeliveryConsumer, listenForOutbox } from '@herald/delivery';
import type { Db, ProfileCache } from '@herald/db';
import { acceptOptionsFrom } from '@herald/inbox';
import { routeProfile } from '@herald/profiles';
import type { Hooks } from '@herald/hooks';
import type { BindingFacts } from '@herald/profiles';
import type { OutboundSender } from '@herald/delivery';
import type { PlatformWebhook } from '@herald/platforms';
import type { NoticeBus, RunQueue } from '@herald/queue';
import type { AnswerDrafts } from '@herald/worker';

const processOwner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * The platform adapters and their SDKs, loaded only by a process that has a
 * platform configured: importing them costs about a second of CPU and 60 MB (docs/decisions/
 * 2026-12-02-lazy-adapters.md), which every role paid before at start.
 */
const platforms = () => import('@herald/platforms');

/** Whether a chat platform has a bot: its accounts (HERALD_PLATFORMS_FILE and the default), or its own token. */
function hasAccounts(config: Config, name: (typeof CHAT_PLATFORMS)[number]): boolean {
  const accounts: Readonly<Record<string, readonly unknown[]>> = config.platforms.accounts;
  return (accounts[name]?.length ?? 0) > 0 || config.platforms[name] !== null;
}

/** One sender per configured platform, from the adapters' registry; other code (cron webhooks) may add its own. */
export async function platformSenders(config: Config): Promise<Map<string, OutboundSender>> {
  const senders = new Map<string, OutboundSender>();
  const configured = CHAT_PLATFORMS.some((name) => hasAccounts(config, name)) || DELIVERY_ONLY_PLATFORMS.some((name) => config.platforms[name] !== null);
  if (!configured) return senders;
  const { DELIVERY_ADAPTERS, PLATFORM_ADAPTERS } = await platforms();
  for (const adapter of [...Object.values(PLATFORM_ADAPTERS), ...Object.values(DELIVERY_ADAPTERS)]) {
    const sender = adapter.senderFor(config.platforms);
    if (sender) senders.set(adapter.name, sender);
  }
  return senders;
}

export interface Delivery {
  consumer: DeliveryConsumer;
  onSessionActive: (sessionId: string, platform: string) => () => void;
  /** Answers shown growing in the chats streamed to; undefined without a chat platform. */
  drafts: AnswerDrafts | undefined;
}

/**
 * The platforms whose chats see answers grow: streaming on, and on for that platform. A platform
 * without a setting is not streamed to.
 */
export function streamedPlatforms(config: Config): Set<string> {
  const perPlatform: Readonly<Record<string, boolean>> = config.platforms.streaming;
  return new Set(CHAT_PLATFORMS.filter((name) => config.model.streaming && perPlatform[name] === true));
}

/**
 * The worker role sends the outbox: it has the replies' transactions next door, scales with the
 * workers, and several consumers share the rows through claims.
 */
export async function startDelivery(config: Config, logger: Logger, shutdown: Shutdown, db: Db, extraSenders: ReadonlyMap<string, OutboundSender> = new Map()): Promise<Delivery> {
  const log = logger.child({ component: 'delivery' });
  const chatSenders = await platformSenders(config);
  const senders = new Map([...chatSenders, ...extraSenders]);
  const consumer = new DeliveryConsumer({ db, senders, logger: log, pollIntervalMs: config.platforms.deliveryPollMs });
  // Typing is shown on chat platforms only; without one there is nothing to show it on.
  const typing = chatSenders.size > 0 ? new (await platforms()).TypingIndicator({ db, senders, logger: log }) : undefined;
  if (senders.size > 0) {
    consumer.start();
    const stopListening = listenForOutbox(config.database.url, () => consumer.nudge(), log);
    shutdown.add('outbox listener', stopListening);
    shutdown.add('delivery consumer', () => consumer.stop());
  }
  const drafts = chatSenders.size > 0 ? new (await platforms()).DraftStreams({ db, senders: chatSenders, streamed: streamedPlatforms(config), logger: log }) : undefined;
  return { consumer, onSessionActive: (sessionId, platform) => typing?.start(sessionId, platform) ?? (() => undefined), drafts };
}

export interface PlatformIngress {
  /** The adapters' HTTP event routes (signed platform events), served by the ingress. */
  webhooks: PlatformWebhook[];
}

/**
 * The ingress side of the platforms, each adapter's `startFor` (Telegram's webhook handler or its
 * leased poller, the Discord gateway leased per shard). Every ingress replica runs this; the
 * leases pick the holders.
 */
export async function startPlatformIngress(
  config: Config,
  logger: Logger,
  shutdown: Shutdown,
  db: Db,
  queue: RunQueue,
  notices: NoticeBus,
  hooks?: Hooks,
  profiles?: ProfileCache,
): Promise<PlatformIngress> {
  if (!CHAT_PLATFORMS.some((name) => hasAccounts(config, name))) return { webhooks: [] };
  const { PLATFORM_ADAPTERS } = await platforms();
  // Every adapter commits messages the same way, through the shared inbox path, routed to a profile
  // by the bindings (cached with the profiles, dropped on every change: no restart needed).
  const deps = {
    owner: processOwner,
    db,
    queue,
    notices,
    queuePrefix: config.redis.queuePrefix,
    accept: acceptOptionsFrom(config, profiles),
    hooks,
    routeProfile: (facts: BindingFacts) => routeProfile(db, facts, profiles),
  };
  const webhooks: PlatformWebhook[] = [];
  for (const adapter of Object.values(PLATFORM_ADAPTERS)) {
    const log = logger.child({ component: adapter.name });
    const inbound = await adapter.startFor(config.platforms, { ...deps, logger: log }, log);
    if (!inbound) continue;
    webhooks.push(...(inbound.webhooks ?? []));
    shutdown.add(`${adapter.name} inbound`, () => inbound.stop());
  }
  return { webhooks };
}
