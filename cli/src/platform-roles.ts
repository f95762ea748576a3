import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Config, Logger, Shutdown } from '@herald/core';
import { DeliveryConsumer, listenForOutbox } from '@herald/delivery';
import type { Db, ProfileCache } from '@herald/db';
import { acceptOptionsFrom } from '@herald/session';
import type { Hooks } from '@herald/hooks';
import type { OutboundSender } from '@herald/delivery';
import type { DiscordIngress, TelegramIngress } from '@herald/platforms';
import type { NoticeBus, RunQueue } from '@herald/queue';

const processOwner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/**
 * The platform adapters and their SDKs (discord.js, grammy), loaded only by a process that has a
 * platform configured: importing them costs about a second of CPU and 60 MB (docs/decisions/
 * 2026-12-02-lazy-adapters.md), which every role paid before at start.
 */
const platforms = () => import('@herald/platforms');

/** One sender per configured platform; other code (cron webhooks) may add its own. */
export async function platformSenders(config: Config): Promise<Map<string, OutboundSender>> {
  const senders = new Map<string, OutboundSender>();
  if (!config.platforms.telegram && !config.platforms.discord) return senders;
  const { DiscordSender, TelegramSender } = await platforms();
  if (config.platforms.telegram) senders.set('telegram', TelegramSender.fromConfig(config.platforms.telegram));
  if (config.platforms.discord) senders.set('discord', DiscordSender.fromConfig(config.platforms.discord));
  return senders;
}

export interface Delivery {
  consumer: DeliveryConsumer;
  onSessionActive: (sessionId: string, platform: string) => () => void;
}

/**
 * The worker role sends the outbox: it has the replies' transactions next door, scales with the
 * workers, and several consumers share the rows through claims.
 */
export async function startDelivery(
  config: Config,
  logger: Logger,
  shutdown: Shutdown,
  db: Db,
  extraSenders: ReadonlyMap<string, OutboundSender> = new Map(),
): Promise<Delivery> {
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
  return { consumer, onSessionActive: (sessionId, platform) => typing?.start(sessionId, platform) ?? (() => undefined) };
}

export interface PlatformIngress {
  telegram: TelegramIngress | undefined;
  discord: DiscordIngress | undefined;
}

/**
 * The ingress side of the platforms: Telegram's webhook handler or its (leased) poller, and the
 * Discord gateway (leased per shard). Every ingress replica runs this; the leases pick the holders.
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
  // Both adapters commit messages the same way, through the shared inbox path.
  const inboundDeps = (log: Logger) => ({
    owner: processOwner,
    db,
    queue,
    notices,
    queuePrefix: config.redis.queuePrefix,
    accept: acceptOptionsFrom(config, profiles),
    logger: log,
    hooks,
  });
  let telegram: TelegramIngress | undefined;
  if (config.platforms.telegram) {
    const log = logger.child({ component: 'telegram' });
    if (config.platforms.telegram.allowedUsers.length === 0) {
      log.warn({}, 'TELEGRAM_ALLOWED_USERS is empty: everyone gets the allowlist refusal (use * to allow everyone)');
    }
    const { TelegramIngress } = await platforms();
    telegram = new TelegramIngress({ config: config.platforms.telegram, ...inboundDeps(log) });
    if (config.platforms.telegram.mode === 'polling') {
      const poller = telegram.startPolling();
      shutdown.add('telegram poller', () => poller.stop());
    } else {
      // Telegram being unreachable must not keep the API down; the webhook route works regardless.
      await telegram.registerWebhook().catch((error: unknown) =>
        log.error({ err: error }, 'setWebhook failed; set it by hand or restart once Telegram is reachable'),
      );
    }
  }
  let discord: DiscordIngress | undefined;
  if (config.platforms.discord) {
    const log = logger.child({ component: 'discord' });
    if (config.platforms.discord.allowedUsers.length === 0) {
      log.warn({}, 'DISCORD_ALLOWED_USERS is empty: everyone gets the allowlist refusal (use * to allow everyone)');
    }
    const { DiscordIngress } = await platforms();
    discord = new DiscordIngress({ config: config.platforms.discord, ...inboundDeps(log) });
    const gateway = discord.start();
    shutdown.add('discord gateway', () => gateway.stop());
  }
  return { telegram, discord };
}
