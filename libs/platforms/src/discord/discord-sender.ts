import { parseWaitButtons } from '../wait-buttons.ts';
import { createHash } from 'node:crypto';
import { DiscordAPIError, HTTPError, RateLimitError, REST, Routes } from 'discord.js';
import { DeliveryError } from '@herald/delivery';
import type { DeliveryReceipt, DraftCalls, OutboundDelivery, OutboundFile, OutboundSender } from '@herald/delivery';
import { megabytes } from '@herald/attachments';
import { splitMarkdown } from '../markdown-split.ts';

export const DISCORD_LIMIT = 2000;
/** What a bot may upload to a server without a boost. */
export const DISCORD_FILE_LIMIT = 10 * 1024 * 1024;

/**
 * The nonce Discord checks when enforce_nonce is set: the same for every attempt of one part of
 * one outbox row, so a resend after an ambiguous attempt returns the message that already exists.
 */
export function discordNonce(outboxId: string, part: number): string {
  return createHash('sha256').update(`${outboxId}:${part}`).digest('base64url').slice(0, 25);
}

export function classifyDiscordError(error: unknown): DeliveryError {
  if (error instanceof RateLimitError) {
    return new DeliveryError(`Discord rate limit on ${error.route}`, { retryable: true, retryAfterMs: Math.max(error.retryAfter, 1), cause: error });
  }
  if (error instanceof DiscordAPIError || error instanceof HTTPError) {
    // Discord answered: a 4xx will not change (missing access, unknown channel); a 5xx might.
    return new DeliveryError(error.message, { retryable: error.status >= 500, cause: error });
  }
  // Timeout or connection lost: maybe created. The nonce makes the resend safe.
  return new DeliveryError(`Discord call ended without an answer: ${(error as Error)?.message ?? String(error)}`, {
    retryable: true,
    ambiguous: true,
    cause: error,
  });
}

/**
 * Sends outbox rows to a channel (or a thread, which is a channel). Discord's own idempotency does
 * the reconciling: each part carries a nonce derived from the row and part with enforce_nonce, so
 * a part resent after a timeout is deduplicated by Discord (within its nonce window of a few
 * minutes, well beyond our retry delays for ambiguous sends). A slash command's answer edits the
 * deferred interaction reply, which is idempotent by nature.
 */
/** Discord action rows hold five buttons each; a deny button is red. */
function buttonRows(raw: string | undefined): { type: 1; components: { type: 2; style: number; label: string; custom_id: string }[] }[] {
  const buttons = parseWaitButtons(raw).slice(0, 25);
  const rows = [];
  for (let i = 0; i < buttons.length; i += 5) {
    rows.push({
      type: 1 as const,
      components: buttons.slice(i, i + 5).map((b) => ({
        type: 2 as const,
        style: b.data.endsWith(':deny') ? 4 : b.data.endsWith(':once') ? 1 : 2,
        label: b.text.slice(0, 80),
        custom_id: b.data,
      })),
    });
  }
  return rows;
}

const NO_MENTIONS = { parse: [] as string[] };

function channelOf(target: Record<string, string>): string {
  const channelId = target.threadId ?? target.chatId;
  if (channelId === undefined || channelId === '') throw new DeliveryError('target.chatId is missing', { retryable: false });
  return channelId;
}

export class DiscordSender implements OutboundSender {
  readonly #rest: REST;

  constructor(rest: REST) {
    this.#rest = rest;
  }

  static fromConfig(options: { botToken: string; apiBase: string; timeoutMs?: number }): DiscordSender {
    const rest = new REST({
      api: options.apiBase,
      version: '10',
      // Our consumer owns retries (durably); rate limits come back to it with their wait.
      retries: 0,
      rejectOnRateLimit: () => true,
      timeout: options.timeoutMs ?? 15_000,
    }).setToken(options.botToken);
    return new DiscordSender(rest);
  }

  readonly drafts: DraftCalls = {
    maxChars: DISCORD_LIMIT,
    post: async (target, text, first, signal) => {
      const reply = first && target.replyTo !== undefined && target.chatType !== 'dm' ? { message_reference: { message_id: target.replyTo, fail_if_not_exists: false } } : {};
      const sent = (await this.#call(() => this.#rest.post(Routes.channelMessages(channelOf(target)), { body: { content: text, allowed_mentions: NO_MENTIONS, ...reply }, signal }))) as { id: string };
      return sent.id;
    },
    edit: async (target, messageId, text, signal) => {
      try {
        await this.#rest.patch(Routes.channelMessage(channelOf(target), messageId), { body: { content: text, allowed_mentions: NO_MENTIONS }, signal });
        return true;
      } catch (error) {
        if (error instanceof DiscordAPIError && error.status === 404) return false;
        throw classifyDiscordError(error);
      }
    },
    remove: async (target, messageId, signal) => {
      try {
        await this.#rest.delete(Routes.channelMessage(channelOf(target), messageId), { signal });
      } catch (error) {
        if (!(error instanceof DiscordAPIError && error.status === 404)) throw classifyDiscordError(error);
      }
    },
  };

  async #call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw classifyDiscordError(error);
    }
  }

  async send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    const channelId = item.target.threadId ?? item.target.chatId;
    if (channelId === undefined || channelId === '') throw new DeliveryError('target.chatId is missing', { retryable: false });
    const parts = splitMarkdown(item.text, DISCORD_LIMIT);
    const progress = item.progress;
    const ids = await this.#adoptDrafts(item, channelId, parts, signal);
    for (let part = ids.length; part < parts.length; part++) {
      const content = parts[part] ?? '';
      await progress.beginPart(part, null);
      let messageId: string;
      try {
        messageId = await this.#sendPart(item, channelId, content, part, part === parts.length - 1, signal);
      } catch (error) {
        throw classifyDiscordError(error);
      }
      await progress.partSent(part, messageId);
      ids.push(messageId);
    }
    // A draft that did not become a part (a retried step streamed longer text): not left as if it were one.
    for (const extra of item.drafts.filter((draft) => !ids.includes(draft))) await this.drafts.remove(item.target, extra, signal);
    return { messageIds: ids };
  }

  /**
   * The streamed drafts become the answer's first parts, each edited into its part's text (a PATCH
   * is idempotent, so a retry repeats it safely). A slash command's answer goes to its interaction
   * instead, and a draft the person deleted is given up: those parts are sent anew.
   */
  async #adoptDrafts(item: OutboundDelivery, channelId: string, parts: string[], signal: AbortSignal): Promise<string[]> {
    const ids = [...item.progress.partsSent];
    if (item.target.interactionToken !== undefined) return ids;
    for (let part = ids.length; part < Math.min(item.drafts.length, parts.length); part++) {
      const draft = item.drafts[part];
      if (draft === undefined) break;
      const components = part === parts.length - 1 ? buttonRows(item.target.buttons) : [];
      try {
        await this.#rest.patch(Routes.channelMessage(channelId, draft), { body: { content: parts[part] ?? '', allowed_mentions: NO_MENTIONS, components }, signal });
      } catch (error) {
        if (error instanceof DiscordAPIError && error.status === 404) break;
        throw classifyDiscordError(error);
      }
      await item.progress.partSent(part, draft);
      ids.push(draft);
    }
    return ids;
  }

  /**
   * A file as a message attachment (multipart), the row's text as its content; one over the 10 MB
   * a bot may upload without a boosted server becomes a note saying so. Text over one message
   * follows as text.
   */
  async sendFile(item: OutboundDelivery, file: OutboundFile, signal: AbortSignal): Promise<DeliveryReceipt> {
    const channelId = item.target.threadId ?? item.target.chatId;
    if (channelId === undefined || channelId === '') throw new DeliveryError('target.chatId is missing', { retryable: false });
    if (file.size > DISCORD_FILE_LIMIT) {
      const note = `${file.name} (${megabytes(file.size)}) is larger than the ${megabytes(DISCORD_FILE_LIMIT)} Discord lets bots send; it was not sent.${item.text === '' ? '' : `\n\n${item.text}`}`;
      return this.send({ ...item, text: note }, signal);
    }
    const content = item.text.length <= DISCORD_LIMIT ? item.text : '';
    let messageId: string;
    try {
      const sent = (await this.#rest.post(Routes.channelMessages(channelId), {
        body: { content, nonce: discordNonce(`${item.id}:file`, 0), enforce_nonce: true, allowed_mentions: { parse: [] } },
        files: [{ name: file.name, data: file.bytes, contentType: file.mime }],
        signal,
      })) as { id: string };
      messageId = sent.id;
    } catch (error) {
      throw classifyDiscordError(error);
    }
    if (content !== '' || item.text === '') return { messageIds: [messageId] };
    const rest = await this.send({ ...item, file: null }, signal);
    return { messageIds: [messageId, ...rest.messageIds] };
  }

  async #sendPart(item: OutboundDelivery, channelId: string, content: string, part: number, last: boolean, signal: AbortSignal): Promise<string> {
    const { interactionToken, applicationId, replyTo } = item.target;
    const components = last ? buttonRows(item.target.buttons) : [];
    const allowed_mentions = { parse: [] as string[] };
    if (interactionToken !== undefined && applicationId !== undefined) {
      const route = part === 0 ? Routes.webhookMessage(applicationId, interactionToken, '@original') : Routes.webhook(applicationId, interactionToken);
      const sent = (await (part === 0
        ? this.#rest.patch(route, { body: { content, allowed_mentions }, auth: false, signal })
        : this.#rest.post(route, { body: { content, allowed_mentions }, auth: false, signal }))) as { id: string };
      return sent.id;
    }
    const sent = (await this.#rest.post(Routes.channelMessages(channelId), {
      body: {
        content,
        nonce: discordNonce(item.id, part),
        enforce_nonce: true,
        allowed_mentions,
        ...(components.length > 0 ? { components } : {}),
        ...(part === 0 && replyTo !== undefined && item.target.chatType !== 'dm' ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } } : {}),
      },
      signal,
    })) as { id: string };
    return sent.id;
  }

  async typing(target: Record<string, string>, signal: AbortSignal): Promise<void> {
    const channelId = target.threadId ?? target.chatId;
    if (channelId === undefined) return;
    await this.#rest.post(Routes.channelTyping(channelId), { signal });
  }
}
