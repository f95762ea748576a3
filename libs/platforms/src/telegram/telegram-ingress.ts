import { createHash, timingSafeEqual } from 'node:crypto';
import { Api, GrammyError } from 'grammy';
import type { Message, Update } from 'grammy/types';
import { backoffMs, sleep } from '@herald/core';
import { isConnectionError } from '@herald/db';
import { failureReason, isDeadLetter, recordFailure } from '@herald/session';
import type { TelegramConfig } from '@herald/core';
import { handleChatInbound } from '../chat-inbound.ts';
import type { ChatInbound, ChatInboundDependencies, ChatInboundOutcome } from '../chat-inbound.ts';
import { LeasedTask } from '../leased-task.ts';
import { AttachmentRefusedError, readResponseCapped } from '@herald/attachments';
import type { IncomingFile } from '@herald/attachments';
import { buttonChatText } from '../wait-buttons.ts';

export interface TelegramBotIdentity {
  id: number;
  username: string;
}

export type TelegramUpdateOutcome = ChatInboundOutcome | 'ignored' | 'dead_letter';

/** The bot's numeric id is the token's first part: no API call needed to namespace update ids. */
export function botIdOf(token: string): string {
  return token.split(':')[0] ?? token;
}

/** A structurally valid update: an object with an integer update_id. */
export function isUpdate(body: unknown): body is Update {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && Number.isSafeInteger((body as { update_id?: unknown }).update_id);
}

/**
 * The message of an update when it is addressed to the bot: every DM; in groups a mention, a reply
 * to one of the bot's messages, or a command. Forum topics become threads (their own sessions).
 */
export function normalizeTelegramUpdate(update: Update, bot: TelegramBotIdentity): ChatInbound | undefined {
  const message: Message | undefined = update.message;
  if (!message || !message.from || message.from.is_bot) return undefined;
  const raw = message.text ?? message.caption ?? '';
  // A photo, document or voice note may come without a caption (in a DM; a group needs the mention).
  if (raw.trim() === '' && (telegramFiles(message).length === 0 || message.chat.type !== 'private')) return undefined;
  const entities = message.entities ?? message.caption_entities ?? [];
  const chat = message.chat;
  let chatType: 'dm' | 'group';
  let text = raw;
  if (chat.type === 'private') chatType = 'dm';
  else if (chat.type === 'group' || chat.type === 'supergroup') {
    chatType = 'group';
    const handle = `@${bot.username}`.toLowerCase();
    const mentioned = entities.some((entity) => {
      const value = raw.slice(entity.offset, entity.offset + entity.length).toLowerCase();
      if (entity.type === 'mention') return value === handle;
      if (entity.type === 'text_mention') return entity.user.id === bot.id;
      // A bare /command in a group, or one addressed to this bot by name.
      if (entity.type === 'bot_command') return entity.offset === 0 && (!value.includes('@') || value.endsWith(handle));
      return false;
    });
    const repliedToBot = message.reply_to_message?.from?.id === bot.id;
    if (!mentioned && !repliedToBot) return undefined;
    text = raw.replace(new RegExp(`(^|\\s)@${bot.username}\\b`, 'ig'), ' ').trim();
    if (text === '' && telegramFiles(message).length === 0) return undefined;
  } else return undefined;
  const from = message.from;
  return {
    platform: 'telegram',
    chatType,
    chatId: String(chat.id),
    threadId: message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : undefined,
    userId: String(from.id),
    userName: from.username ?? [from.first_name, from.last_name].filter(Boolean).join(' '),
    userHandle: from.username,
    text,
    dedupeKey: `telegram:${bot.id}:${update.update_id}`,
    platformMessageId: String(message.message_id),
  };
}

/** A file a Telegram message carries, as getFile will want it. */
export interface TelegramFileRef {
  fileId: string;
  name: string;
  size: number | undefined;
}

/**
 * The files of a message: the largest size of a photo (Telegram sends several), a document, a voice
 * note, an audio file. Photos and voice notes have no name of their own, so they get one.
 */
export function telegramFiles(message: Message): TelegramFileRef[] {
  const files: TelegramFileRef[] = [];
  const photo = message.photo?.reduce((best, size) => ((size.file_size ?? 0) >= (best.file_size ?? 0) ? size : best));
  if (photo) files.push({ fileId: photo.file_id, name: `photo-${message.message_id}`, size: photo.file_size });
  if (message.document) files.push({ fileId: message.document.file_id, name: message.document.file_name ?? `document-${message.message_id}`, size: message.document.file_size });
  if (message.voice) files.push({ fileId: message.voice.file_id, name: `voice-${message.message_id}`, size: message.voice.file_size });
  if (message.audio) files.push({ fileId: message.audio.file_id, name: message.audio.file_name ?? `audio-${message.message_id}`, size: message.audio.file_size });
  return files;
}

/** Constant-time check of X-Telegram-Bot-Api-Secret-Token against TELEGRAM_WEBHOOK_SECRET. */
export function verifyTelegramSecret(secret: string | undefined, header: string | string[] | undefined): boolean {
  if (secret === undefined || typeof header !== 'string') return false;
  return timingSafeEqual(digest(header), digest(secret));
}

export interface TelegramIngressOptions extends Omit<ChatInboundDependencies, 'allowedUsers'> {
  config: TelegramConfig;
  /** This process, for the polling lease. */
  owner: string;
  api?: Api;
  /** Lease TTL of the poller. @default 30000 */
  pollLeaseTtlMs?: number;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Telegram on the ingress: the webhook handler, or the poller (one per bot token across all
 * replicas, through a platform lease). Either way an update is committed to the inbox before it
 * is acknowledged: the webhook answers 200 after the commit, the poller confirms an offset only
 * after every update before it committed.
 */
export class TelegramIngress {
  readonly api: Api;
  readonly #options: TelegramIngressOptions;
  #identity: Promise<TelegramBotIdentity> | undefined;
  #poller: LeasedTask | undefined;

  /**
   * The webhook route's shape check, on the adapter so that the route needs no value import of
   * this package (which would load grammy and discord.js into every ingress).
   */
  isUpdate(body: unknown): body is Update {
    return isUpdate(body);
  }

  constructor(options: TelegramIngressOptions) {
    this.#options = options;
    this.api = options.api ?? new Api(options.config.botToken, { apiRoot: options.config.apiRoot, timeoutSeconds: options.config.pollTimeoutSeconds + 15 });
  }

  get botId(): string {
    return botIdOf(this.#options.config.botToken);
  }

  /** getMe once: groups need the bot's username to see mentions. */
  identity(): Promise<TelegramBotIdentity> {
    this.#identity ??= this.api.getMe().then(
      (me) => ({ id: me.id, username: me.username }),
      (error: unknown) => {
        this.#identity = undefined;
        throw error;
      },
    );
    return this.#identity;
  }

  /** Constant-time check of X-Telegram-Bot-Api-Secret-Token. */
  verifySecret(header: string | string[] | undefined): boolean {
    return verifyTelegramSecret(this.#options.config.webhookSecret, header);
  }

  /**
   * Handles one update from the webhook or the poller. A storage outage is thrown (the webhook
   * answers 503, the poller retries: Telegram keeps the update). Any other failure is the update's
   * own (forged, malformed, or a bug it triggers): it is tried once more, and failing the same way
   * twice it becomes a dead letter with the reason, is logged, and counts as handled, so intake
   * goes on and the platform gets its 200.
   */
  async handleUpdate(update: Update): Promise<TelegramUpdateOutcome> {
    const key = `telegram:${this.botId}:${update.update_id}`;
    const db = this.#options.db;
    if (await isDeadLetter(db, 'telegram_update', key)) return 'dead_letter';
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#dispatch(update);
      } catch (error) {
        if (isConnectionError(error)) throw error;
        const reason = failureReason(error);
        // A third, different failure ends it too: an update gets no more than three tries.
        const strike = await recordFailure(db, { source: 'telegram_update', key, reason, payload: update }, attempt >= 3);
        this.#options.logger.warn({ err: error, updateId: update.update_id, attempt }, 'telegram update failed');
        if (strike.dead) {
          this.#options.logger.error({ updateId: update.update_id, reason }, 'telegram update dead-lettered; intake goes on');
          return 'dead_letter';
        }
      }
    }
  }

  async #dispatch(update: Update): Promise<TelegramUpdateOutcome> {
    if (update.callback_query) return this.#handleButton(update);
    const normalized = normalizeTelegramUpdate(update, await this.identity());
    if (!normalized) return 'ignored';
    const files = update.message ? telegramFiles(update.message).map((ref) => this.#incomingFile(ref)) : [];
    const message: ChatInbound = files.length === 0 ? normalized : { ...normalized, files };
    const outcome = await handleChatInbound({ ...this.#options, allowedUsers: this.#options.config.allowedUsers }, message);
    this.#options.logger.debug({ updateId: update.update_id, outcome }, 'telegram update');
    return outcome;
  }

  /** A file of the message, fetched only when read: getFile, then the Bot API's file endpoint, under the cap. */
  #incomingFile(ref: TelegramFileRef): IncomingFile {
    return {
      name: ref.name,
      declaredBytes: ref.size,
      read: async (maxBytes) => {
        // Telegram's own refusal (a file over the 20 MB bots may download) is the file's, not the update's.
        const file = await this.api.getFile(ref.fileId).catch((error: unknown) => {
          if (error instanceof GrammyError) throw new AttachmentRefusedError(`Telegram would not hand it over (${error.description})`);
          throw error;
        });
        if (file.file_path === undefined) throw new AttachmentRefusedError('Telegram would not hand it over');
        const response = await fetch(`${this.#options.config.apiRoot}/file/bot${this.#options.config.botToken}/${file.file_path}`, { signal: AbortSignal.timeout(120_000) });
        if (!response.ok) throw new Error(`Telegram file download failed: HTTP ${response.status}`);
        return readResponseCapped(response, ref.name, maxBytes);
      },
    };
  }

  /**
   * A button under an approval or a question: it becomes the chat message a person could have typed
   * (/approve, /approve session, /deny, or the choice's text), through the same allowlist and inbox.
   */
  async #handleButton(update: Update): Promise<TelegramUpdateOutcome> {
    const query = update.callback_query;
    const source = query?.message;
    if (!query || !source || source.chat.type === 'channel') return 'ignored';
    // Stop the button's spinner whatever happens next; a failure here only costs the animation.
    await this.api.answerCallbackQuery(query.id).catch(() => undefined);
    const text = await buttonChatText(this.#options.db, query.data ?? '');
    if (text === undefined) return 'ignored';
    const bot = await this.identity();
    const from = query.from;
    const message: ChatInbound = {
      platform: 'telegram',
      chatType: source.chat.type === 'private' ? 'dm' : 'group',
      chatId: String(source.chat.id),
      threadId: 'is_topic_message' in source && source.is_topic_message && source.message_thread_id !== undefined ? String(source.message_thread_id) : undefined,
      userId: String(from.id),
      userName: from.username ?? [from.first_name, from.last_name].filter(Boolean).join(' '),
      userHandle: from.username,
      text,
      dedupeKey: `telegram:${bot.id}:${update.update_id}`,
      platformMessageId: String(source.message_id),
    };
    return handleChatInbound({ ...this.#options, allowedUsers: this.#options.config.allowedUsers }, message);
  }

  /** Points Telegram at our webhook (when TELEGRAM_WEBHOOK_URL is set). */
  async registerWebhook(): Promise<void> {
    const { webhookUrl, webhookSecret } = this.#options.config;
    if (webhookUrl === undefined) return;
    await this.api.setWebhook(webhookUrl, {
      ...(webhookSecret === undefined ? {} : { secret_token: webhookSecret }),
      allowed_updates: ['message', 'callback_query'],
    });
  }

  startPolling(): LeasedTask {
    this.#poller ??= new LeasedTask({
      db: this.#options.db,
      name: `telegram-poll:${this.botId}`,
      owner: this.#options.owner,
      ttlMs: this.#options.pollLeaseTtlMs ?? 30_000,
      logger: this.#options.logger,
      run: (signal) => this.#poll(signal),
    });
    this.#poller.start();
    return this.#poller;
  }

  async stop(): Promise<void> {
    await this.#poller?.stop();
  }

  async #poll(signal: AbortSignal): Promise<void> {
    const logger = this.#options.logger;
    const grammySignal = signal as unknown as Parameters<Api['getMe']>[0];
    // A registered webhook makes getUpdates fail with 409.
    await this.api.deleteWebhook({}, grammySignal);
    let offset: number | undefined;
    let failures = 0;
    while (!signal.aborted) {
      let updates: Update[];
      try {
        updates = await this.api.getUpdates(
          { timeout: this.#options.config.pollTimeoutSeconds, allowed_updates: ['message', 'callback_query'], ...(offset === undefined ? {} : { offset }) },
          grammySignal,
        );
      } catch (error) {
        if (signal.aborted) return;
        failures++;
        const retryAfter = error instanceof GrammyError ? error.parameters.retry_after : undefined;
        logger.warn({ err: error }, 'telegram getUpdates failed; retrying');
        await sleep(retryAfter !== undefined ? retryAfter * 1000 : backoffMs(failures, 500, 30_000), signal).catch(() => undefined);
        continue;
      }
      failures = 0;
      for (const update of updates) {
        // In order, one at a time: the offset moves past an update only after it committed or was
        // dead-lettered. Only a storage outage reaches the catch: the offset stays where it is, so
        // Telegram hands the update out again.
        for (let attempt = 1; ; attempt++) {
          try {
            await this.handleUpdate(update);
            break;
          } catch (error) {
            if (signal.aborted) return;
            logger.warn({ err: error, updateId: update.update_id }, 'telegram update not committed; retrying');
            await sleep(backoffMs(attempt, 200, 10_000), signal).catch(() => undefined);
          }
        }
        offset = update.update_id + 1;
      }
    }
  }
}
