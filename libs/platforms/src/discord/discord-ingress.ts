import { backoffMs, sleep } from '@herald/core';
import type { DiscordConfig } from '@herald/core';
import { isConnectionError } from '@herald/db';
import { failureReason, isDeadLetter, recordFailure } from '@herald/session';
import { CHAT_COMMANDS } from '@herald/inbox';
import { ApplicationCommandOptionType, ChannelType, Client, Events, GatewayIntentBits, Partials, REST, Routes } from 'discord.js';
import type { ButtonInteraction, ChatInputCommandInteraction, Message } from 'discord.js';
import { handleChatInbound } from '../chat-inbound.ts';
import { readResponseCapped } from '@herald/attachments';
import type { IncomingFile } from '@herald/attachments';
import type { ChatInbound, ChatInboundDependencies } from '../chat-inbound.ts';
import { LeasedTask } from '../leased-task.ts';
import { buttonChatText } from '../wait-buttons.ts';

/** A bot token's first part is the bot's user id in base64: the lease is named without an API call. */
export function discordBotIdOf(token: string): string {
  const first = token.split('.')[0] ?? '';
  const decoded = Buffer.from(first, 'base64').toString('utf8');
  return /^\d+$/.test(decoded) ? decoded : first;
}

/**
 * A message addressed to the bot: every DM; in guild channels and threads a mention of the bot or
 * a reply to it. A thread is its own session (thread id under the parent channel).
 */
export function normalizeDiscordMessage(message: Message, botId: string): ChatInbound | undefined {
  if (message.author.bot || message.system) return undefined;
  const channel = message.channel;
  let chatType: 'dm' | 'group';
  let chatId = message.channelId;
  let threadId: string | undefined;
  let text = message.content;
  if (channel.type === ChannelType.DM) chatType = 'dm';
  else {
    chatType = 'group';
    const mentioned = message.mentions.users.has(botId);
    const repliedToBot = message.mentions.repliedUser?.id === botId;
    if (!mentioned && !repliedToBot) return undefined;
    text = text.replace(new RegExp(`<@!?${botId}>`, 'g'), ' ').trim();
    if (channel.isThread()) {
      chatId = channel.parentId ?? message.channelId;
      threadId = channel.id;
    }
  }
  const files = discordFiles(message);
  if (text.trim() === '' && files.length === 0) return undefined;
  return {
    ...(files.length === 0 ? {} : { files }),
    platform: 'discord',
    chatType,
    chatId,
    threadId,
    userId: message.author.id,
    userName: message.author.globalName ?? message.author.username,
    userHandle: message.author.username,
    text,
    dedupeKey: `discord:${message.id}`,
    platformMessageId: message.id,
    guildId: message.guildId ?? undefined,
  };
}

/** A message's attachments, fetched from Discord's CDN only when read, under the cap. */
function discordFiles(message: Message): IncomingFile[] {
  return [...message.attachments.values()].map((attachment) => ({
    name: attachment.name,
    declaredBytes: attachment.size,
    read: async (maxBytes: number) => {
      const response = await fetch(attachment.url, { signal: AbortSignal.timeout(120_000) });
      if (!response.ok) throw new Error(`Discord attachment download failed: HTTP ${response.status}`);
      return readResponseCapped(response, attachment.name, maxBytes);
    },
  }));
}

/** What each command's option takes, as Discord shows it under the option. */
const ARGUMENT_HINTS: Record<string, string> = {
  mode: 'followup, collect, steer or interrupt',
  scope: 'session: allow it for the rest of the session',
  reason: 'why (the model is told)',
  focus: 'what the summary should weigh most',
  platform: 'telegram or discord',
  code: 'the code from herald people link-code',
};

/** The chat commands as Discord application commands (/queue takes its mode as an option). */
export function discordCommandDefinitions(): unknown[] {
  return CHAT_COMMANDS.map((command) => ({
    name: command.name,
    description: command.description,
    type: 1,
    ...('argument' in command
      ? { options: [{ name: command.argument, description: ARGUMENT_HINTS[command.argument] ?? command.argument, type: ApplicationCommandOptionType.String, required: false }] }
      : {}),
  }));
}

/** Registers the slash commands globally: run once per deployment (`herald discord-commands`), not per start. */
export async function deployDiscordCommands(config: DiscordConfig): Promise<number> {
  const rest = new REST({ api: config.apiBase, version: '10' }).setToken(config.botToken);
  const definitions = discordCommandDefinitions();
  await rest.put(Routes.applicationCommands(discordBotIdOf(config.botToken)), { body: definitions });
  return definitions.length;
}

export interface DiscordIngressOptions extends Omit<ChatInboundDependencies, 'allowedUsers'> {
  config: DiscordConfig;
  owner: string;
  /** @default 30000 */
  leaseTtlMs?: number;
  /** The shard this process may hold. @default 0 */
  shardId?: number;
  /** @default 1 */
  shardCount?: number;
}

/**
 * The Discord gateway on the ingress: one connection per shard, held by whichever replica holds
 * that shard's platform lease. Messages and slash commands are committed to the inbox; the gateway
 * has no acknowledgements, so a commit is retried in place a few times before the event is lost.
 */
export class DiscordIngress {
  readonly #options: DiscordIngressOptions;
  #task: LeasedTask | undefined;
  #client: Client | undefined;

  constructor(options: DiscordIngressOptions) {
    this.#options = options;
  }

  get botId(): string {
    return discordBotIdOf(this.#options.config.botToken);
  }

  /** The connected client while this process holds the shard (tests and operators). */
  get client(): Client | undefined {
    return this.#client;
  }

  start(): LeasedTask {
    const shard = this.#options.shardId ?? 0;
    this.#task ??= new LeasedTask({
      db: this.#options.db,
      name: `discord-gateway:${this.botId}:${shard}`,
      owner: this.#options.owner,
      ttlMs: this.#options.leaseTtlMs ?? 30_000,
      logger: this.#options.logger,
      run: (signal) => this.#connect(signal),
    });
    this.#task.start();
    return this.#task;
  }

  async stop(): Promise<void> {
    await this.#task?.stop();
  }

  async #connect(signal: AbortSignal): Promise<void> {
    const { config, logger } = this.#options;
    const client = new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages, GatewayIntentBits.MessageContent],
      partials: [Partials.Channel],
      rest: { api: config.apiBase, version: '10' },
      shards: [this.#options.shardId ?? 0],
      shardCount: this.#options.shardCount ?? 1,
    });
    client.on(Events.MessageCreate, (message) => {
      void this.#guarded(`discord:${message.id}`, messagePayload(message), signal, async () => {
        const inbound = normalizeDiscordMessage(message, this.botId);
        if (inbound) await this.#commit(inbound);
      });
    });
    client.on(Events.InteractionCreate, (interaction) => {
      if (interaction.isChatInputCommand()) void this.#command(interaction, signal);
      else if (interaction.isButton()) void this.#button(interaction, signal);
    });
    client.on(Events.Error, (error) => logger.warn({ err: error }, 'discord client error'));
    try {
      await client.login(config.botToken);
      this.#client = client;
      logger.info({ shard: this.#options.shardId ?? 0 }, 'discord gateway connected');
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    } finally {
      this.#client = undefined;
      await client.destroy();
    }
  }

  /**
   * Runs one gateway event's work. The gateway has no acknowledgements, so retries happen here: a
   * storage outage is retried with backoff a few times (then the event is lost, and logged); any
   * other failure is the event's own (malformed data, or a bug it triggers): tried once more, and
   * failing the same way twice (or three times in all) it becomes a dead letter with the reason,
   * as Telegram updates do, and the gateway goes on. A dead-lettered event seen again is skipped.
   */
  async #guarded(key: string, payload: unknown, signal: AbortSignal, work: () => Promise<void>): Promise<void> {
    const { db, logger } = this.#options;
    if (await isDeadLetter(db, 'discord_event', key).catch(() => false)) return;
    for (let attempt = 1, strikes = 0; !signal.aborted; attempt++) {
      try {
        await work();
        return;
      } catch (error) {
        if (isConnectionError(error)) {
          if (attempt >= 5) return logger.error({ err: error, key }, 'discord event could not be committed: storage unreachable');
          await sleep(backoffMs(attempt, 200, 5000), signal).catch(() => undefined);
          continue;
        }
        strikes += 1;
        logger.warn({ err: error, key, attempt }, 'discord event failed');
        const strike = await recordFailure(db, { source: 'discord_event', key, reason: failureReason(error), payload }, strikes >= 3).catch(() => null);
        if (strike === null) return logger.error({ err: error, key }, 'discord event failed and its failure could not be recorded; it is dropped');
        if (strike.dead) return logger.error({ key, reason: failureReason(error) }, 'discord event dead-lettered; the gateway goes on');
      }
    }
  }

  async #commit(message: ChatInbound): Promise<void> {
    await handleChatInbound({ ...this.#options, allowedUsers: this.#options.config.allowedUsers }, message);
  }

  /**
   * A slash command: deferred at once (Discord wants an answer within 3 s), then committed like a
   * typed command; its answer goes through the outbox and edits the deferred reply.
   */
  async #command(interaction: ChatInputCommandInteraction, signal: AbortSignal): Promise<void> {
    try {
      await interaction.deferReply();
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'discord interaction could not be deferred');
      return;
    }
    const option = interaction.options.data[0]?.value;
    await this.#guarded(`discord:interaction:${interaction.id}`, { id: interaction.id, command: interaction.commandName }, signal, () =>
      this.#commit({
        ...interactionInbound(interaction, `/${interaction.commandName}${option === undefined ? '' : ` ${String(option)}`}`),
        platformMessageId: interaction.id,
        replyVia: { interactionToken: interaction.token, applicationId: interaction.applicationId },
      }),
    );
  }

  /**
   * A button under an approval or a question: acknowledged at once (no message of its own), then
   * committed as the chat message a person could have typed, through the same allowlist and inbox.
   */
  async #button(interaction: ButtonInteraction, signal: AbortSignal): Promise<void> {
    try {
      await interaction.deferUpdate();
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'discord button could not be acknowledged');
    }
    await this.#guarded(`discord:interaction:${interaction.id}`, { id: interaction.id, custom_id: interaction.customId }, signal, async () => {
      const text = await buttonChatText(this.#options.db, interaction.customId);
      if (text !== undefined) await this.#commit({ ...interactionInbound(interaction, text), platformMessageId: interaction.message.id });
    });
  }
}

/** What a dead letter keeps of a gateway message: enough to tell what it was, not the whole object. */
function messagePayload(message: Message): Record<string, unknown> {
  return { id: message.id, channel_id: message.channelId, guild_id: message.guildId, author_id: message.author?.id, content: message.content };
}

/** The chat message an interaction stands for: who, where (a thread is its own session), what. */
function interactionInbound(interaction: ChatInputCommandInteraction | ButtonInteraction, text: string): Omit<ChatInbound, 'platformMessageId'> {
  const channel = interaction.channel;
  const inThread = channel?.isThread() === true;
  return {
    platform: 'discord',
    chatType: interaction.inGuild() ? 'group' : 'dm',
    chatId: inThread ? (channel.parentId ?? interaction.channelId) : interaction.channelId,
    threadId: inThread ? interaction.channelId : undefined,
    userId: interaction.user.id,
    userName: interaction.user.globalName ?? interaction.user.username,
    userHandle: interaction.user.username,
    text,
    dedupeKey: `discord:interaction:${interaction.id}`,
    // Matched by bindings' guild_id like a message: a button press reaches the same profile.
    guildId: interaction.guildId ?? undefined,
  };
}
