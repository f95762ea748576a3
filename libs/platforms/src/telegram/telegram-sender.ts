import { parseWaitButtons } from '../wait-buttons.ts';
import { readStoredTarget } from '@herald/core';
import { Api, GrammyError, HttpError, InputFile } from 'grammy';
import { megabytes } from '@herald/attachments';
import { DeliveryError } from '@herald/delivery';
import type { DeliveryReceipt, DraftCalls, OutboundDelivery, OutboundFile, OutboundSender } from '@herald/delivery';
import { splitMarkdown } from '../markdown-split.ts';
import { markdownToTelegramHtml } from './telegram-format.ts';

export const TELEGRAM_LIMIT = 4096;
/** What bots may upload: any file up to 50 MB, a photo up to 10 MB; a caption up to 1024 characters. */
export const TELEGRAM_FILE_LIMIT = 50 * 1024 * 1024;
const TELEGRAM_PHOTO_LIMIT = 10 * 1024 * 1024;
const TELEGRAM_CAPTION_LIMIT = 1024;
/** Sent as photos (shown inline); anything else, SVG included, goes as a document. */
const PHOTO_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp']);

// grammy types its signals with the abort-controller polyfill; Node's AbortSignal is what it gets.
type GrammySignal = Parameters<Api['getMe']>[0];
const sig = (signal: AbortSignal) => signal as unknown as GrammySignal;
/** Message ids probed after the last known one when reconciling an ambiguous send. */
const RECONCILE_WINDOW = 10;

export interface TelegramChunk {
  html: string;
  /** The Markdown source, sent as plain text when Telegram rejects the HTML. */
  plain: string;
}

/**
 * Splits on the Markdown, then checks the HTML: escapes and tags make it longer, so a chunk whose
 * HTML overflows is split again, smaller, until every chunk fits in both forms.
 */
export function telegramChunks(markdown: string, limit = TELEGRAM_LIMIT): TelegramChunk[] {
  const chunks: TelegramChunk[] = [];
  for (const plain of splitMarkdown(markdown, limit)) {
    const html = markdownToTelegramHtml(plain);
    if (html.length <= TELEGRAM_LIMIT) chunks.push({ html, plain });
    else chunks.push(...telegramChunks(plain, Math.floor(limit * 0.75)));
  }
  return chunks;
}

const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { error?: unknown; cause?: unknown }).error ?? (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Telegram's answer or the transport failure, as the consumer needs it. */
export function classifyTelegramError(error: unknown): DeliveryError {
  if (error instanceof GrammyError) {
    const retryAfter = error.parameters.retry_after;
    if (error.error_code === 429) {
      return new DeliveryError(error.message, { retryable: true, retryAfterMs: (retryAfter ?? 1) * 1000, cause: error });
    }
    // 5xx: Telegram answered, and it answers 5xx before doing anything; 4xx will not change.
    return new DeliveryError(error.message, { retryable: error.error_code >= 500, cause: error });
  }
  if (error instanceof HttpError) {
    const code = causeCode(error);
    if (code !== undefined && NOT_SENT_CODES.has(code)) {
      return new DeliveryError(`Telegram unreachable (${code})`, { retryable: true, cause: error });
    }
    // A timeout or a connection lost after the request left: Telegram may have sent it.
    return new DeliveryError(`Telegram call ended without an answer: ${error.message}`, {
      retryable: true,
      ambiguous: true,
      cause: error,
    });
  }
  return new DeliveryError((error as Error)?.message ?? String(error), { retryable: true, ambiguous: true, cause: error });
}

function isParseError(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /can't parse entities/i.test(error.description);
}

interface ChatTarget {
  chatId: string;
  threadId: number | undefined;
  replyTo: number | undefined;
  isPrivate: boolean;
  /** Inline keyboard rows under the last part (approvals, clarify choices). */
  keyboard: { text: string; callback_data: string }[][] | undefined;
}

/** Approvals fit one row; longer choices get a row each. */
function keyboardOf(raw: string | undefined): ChatTarget['keyboard'] {
  const buttons = parseWaitButtons(raw).map((b) => ({ text: b.text, callback_data: b.data }));
  if (buttons.length === 0) return undefined;
  return buttons.length <= 3 && buttons.every((b) => b.text.length <= 20) ? [buttons] : buttons.map((b) => [b]);
}

/** The stored target (read by the one reader, @herald/core delivery-target.ts) in the Bot API's terms. */
function chatTarget(stored: Record<string, string>): ChatTarget {
  const target = readStoredTarget(stored);
  if (!target) throw new DeliveryError('target.chatId is missing', { retryable: false });
  const threadId = target.threadId === undefined ? undefined : Number(target.threadId);
  const replyTo = target.replyTo === undefined ? undefined : Number(target.replyTo);
  return {
    chatId: target.chatId,
    threadId: Number.isSafeInteger(threadId) ? threadId : undefined,
    replyTo: Number.isSafeInteger(replyTo) ? replyTo : undefined,
    isPrivate: target.chatType === 'dm',
    keyboard: keyboardOf(target.via?.buttons),
  };
}

/**
 * Sends outbox rows through the Bot API. Each part is marked in flight before its sendMessage;
 * an attempt that finds a part still marked (its predecessor timed out or died) reconciles first:
 * Telegram has no idempotency key and no way to list a chat's messages, but message ids in a chat
 * are sequential and only this row can have sent a bot message after the chat's last receipt (the
 * outbox sends one row per chat at a time). So the ids after the newest known one are probed with
 * editMessageText carrying the very same text: "message is not modified" proves the part arrived
 * (under that id), "not found" / "can't be edited" rule an id out. Only when no id is known at all
 * is the part not resent: the row fails as ambiguous, visible through the API.
 */
export class TelegramSender implements OutboundSender {
  readonly #api: Api;

  constructor(api: Api) {
    this.#api = api;
  }

  static fromConfig(options: { botToken: string; apiRoot: string; timeoutSeconds?: number }): TelegramSender {
    return new TelegramSender(new Api(options.botToken, { apiRoot: options.apiRoot, timeoutSeconds: options.timeoutSeconds ?? 20 }));
  }

  readonly drafts: DraftCalls = {
    maxChars: TELEGRAM_LIMIT,
    post: (target, text, first, signal) => this.#sendPart(chatTarget(target), { html: '', plain: text }, first, false, signal, false),
    edit: (target, messageId, text, signal) => this.#edit(chatTarget(target).chatId, messageId, { html: '', plain: text }, undefined, signal, false),
    remove: async (target, messageId, signal) => {
      try {
        await this.#api.deleteMessage(chatTarget(target).chatId, Number(messageId), sig(signal));
      } catch (error) {
        if (!(error instanceof GrammyError && error.error_code === 400)) throw classifyTelegramError(error);
      }
    },
  };

  async send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    const target = chatTarget(item.target);
    const chunks = telegramChunks(item.text);
    const progress = item.progress;
    const ids = await this.#adoptDrafts(item, target, chunks, signal);
    const inFlight = progress.inFlight;
    if (inFlight !== null && inFlight.part === ids.length) {
      const chunk = chunks[inFlight.part];
      // Bot messages known to be another row's (or a streaming draft's) are never taken for this part.
      const others = new Set([...item.drafts, ...(await progress.recentChatMessageIds())]);
      const found = chunk === undefined ? undefined : await this.#reconcile(target, chunk, inFlight.anchor, others, signal);
      if (found !== undefined) {
        await progress.partSent(inFlight.part, found);
        ids.push(found);
      } else await progress.clearInFlight();
    }
    for (let part = ids.length; part < chunks.length; part++) {
      const chunk = chunks[part];
      if (chunk === undefined) break;
      const known = [...ids, ...item.drafts, ...(await progress.recentChatMessageIds())];
      if (target.replyTo !== undefined) known.push(String(target.replyTo));
      await progress.beginPart(part, newest(known));
      const messageId = await this.#sendPart(target, chunk, part === 0, part === chunks.length - 1, signal);
      await progress.partSent(part, messageId);
      ids.push(messageId);
    }
    // A draft that did not become a part (a retried step streamed longer text): not left as if it were one.
    for (const extra of item.drafts.filter((draft) => !ids.includes(draft))) await this.drafts.remove(item.target, extra, signal);
    return { messageIds: ids };
  }

  /**
   * The streamed drafts become the answer's first parts: each is edited into its part's text (an
   * edit is idempotent, so a retry repeats it safely) and recorded as sent. A draft the person
   * deleted is given up, and its part is sent anew.
   */
  async #adoptDrafts(item: OutboundDelivery, target: ChatTarget, chunks: TelegramChunk[], signal: AbortSignal): Promise<string[]> {
    const ids = [...item.progress.partsSent];
    for (let part = ids.length; part < Math.min(item.drafts.length, chunks.length); part++) {
      const draft = item.drafts[part];
      const chunk = chunks[part];
      if (draft === undefined || chunk === undefined) break;
      const last = part === chunks.length - 1;
      const edited = await this.#edit(target.chatId, draft, chunk, last ? target.keyboard : undefined, signal, true);
      if (!edited) break;
      await item.progress.partSent(part, draft);
      ids.push(draft);
    }
    return ids;
  }

  /** Edits a message into a chunk (HTML, or its plain text when rejected); false when the message is gone. */
  async #edit(chatId: string, messageId: string, chunk: TelegramChunk, keyboard: ChatTarget['keyboard'], signal: AbortSignal, html: boolean): Promise<boolean> {
    const markup = keyboard ? { reply_markup: { inline_keyboard: keyboard } } : {};
    const forms = html
      ? ([
          [chunk.html, 'HTML'],
          [chunk.plain, undefined],
        ] as const)
      : ([[chunk.plain, undefined]] as const);
    for (const [text, mode] of forms) {
      try {
        await this.#api.editMessageText(chatId, Number(messageId), text, { ...markup, link_preview_options: { is_disabled: true }, ...(mode === undefined ? {} : { parse_mode: mode }) }, sig(signal));
        return true;
      } catch (error) {
        if (!(error instanceof GrammyError) || error.error_code !== 400) throw classifyTelegramError(error);
        if (/message is not modified/i.test(error.description)) return true;
        if (isParseError(error)) continue;
        if (/not found|can't be edited/i.test(error.description)) return false;
        throw classifyTelegramError(error);
      }
    }
    throw new DeliveryError('Telegram refused the text in both forms', { retryable: false });
  }

  /**
   * A file as a photo (an image Telegram shows inline, up to 10 MB) or a document (anything else,
   * SVG and HTML included, up to the 50 MB bots may upload), multipart, the row's text as caption.
   * A file over the limit becomes a note that says so; a caption over 1024 characters follows as text.
   */
  async sendFile(item: OutboundDelivery, file: OutboundFile, signal: AbortSignal): Promise<DeliveryReceipt> {
    const target = chatTarget(item.target);
    if (file.size > TELEGRAM_FILE_LIMIT) {
      const note = `${file.name} (${megabytes(file.size)}) is larger than the ${megabytes(TELEGRAM_FILE_LIMIT)} Telegram lets bots send; it was not sent.${item.text === '' ? '' : `\n\n${item.text}`}`;
      return this.send({ ...item, text: note }, signal);
    }
    const caption = item.text.length <= TELEGRAM_CAPTION_LIMIT ? item.text : '';
    const options = {
      ...(caption === '' ? {} : { caption }),
      ...(target.threadId === undefined ? {} : { message_thread_id: target.threadId }),
    };
    const input = new InputFile(new Uint8Array(file.bytes), file.name);
    const asPhoto = PHOTO_TYPES.has(file.mime) && file.size <= TELEGRAM_PHOTO_LIMIT;
    let messageId: string;
    try {
      const sent = asPhoto ? await this.#api.sendPhoto(target.chatId, input, options, sig(signal)) : await this.#api.sendDocument(target.chatId, input, options, sig(signal));
      messageId = String(sent.message_id);
    } catch (error) {
      throw classifyTelegramError(error);
    }
    if (caption !== '' || item.text === '') return { messageIds: [messageId] };
    const rest = await this.send({ ...item, file: null }, signal);
    return { messageIds: [messageId, ...rest.messageIds] };
  }

  async #sendPart(target: ChatTarget, chunk: TelegramChunk, first: boolean, last: boolean, signal: AbortSignal, html = true): Promise<string> {
    const common = {
      ...(last && target.keyboard ? { reply_markup: { inline_keyboard: target.keyboard } } : {}),
      ...(target.threadId === undefined ? {} : { message_thread_id: target.threadId }),
      // In a group the answer quotes the message it answers; in a DM that is noise.
      ...(first && !target.isPrivate && target.replyTo !== undefined ? { reply_parameters: { message_id: target.replyTo, allow_sending_without_reply: true } } : {}),
      link_preview_options: { is_disabled: true },
    };
    if (html) {
      try {
        const sent = await this.#api.sendMessage(target.chatId, chunk.html, { ...common, parse_mode: 'HTML' }, sig(signal));
        return String(sent.message_id);
      } catch (error) {
        if (!isParseError(error)) throw classifyTelegramError(error);
      }
    }
    try {
      const sent = await this.#api.sendMessage(target.chatId, chunk.plain, common, sig(signal));
      return String(sent.message_id);
    } catch (error) {
      throw classifyTelegramError(error);
    }
  }

  /** The id under which the in-flight part arrived, or undefined when it did not arrive. */
  async #reconcile(target: ChatTarget, chunk: TelegramChunk, anchor: string | null, others: ReadonlySet<string>, signal: AbortSignal): Promise<string | undefined> {
    const start = anchor === null ? NaN : Number(anchor);
    if (!Number.isSafeInteger(start)) {
      throw new DeliveryError('a send timed out and no earlier message id in this chat is known to check it against; not resent, to avoid a duplicate', { retryable: false, ambiguous: true });
    }
    for (let id = start + 1; id <= start + RECONCILE_WINDOW; id++) {
      if (others.has(String(id))) continue;
      if (await this.#probe(target.chatId, id, chunk, signal)) return String(id);
    }
    return undefined;
  }

  async #probe(chatId: string, messageId: number, chunk: TelegramChunk, signal: AbortSignal): Promise<boolean> {
    for (const [text, mode] of [
      [chunk.html, 'HTML'],
      [chunk.plain, undefined],
    ] as const) {
      try {
        await this.#api.editMessageText(chatId, messageId, text, mode === undefined ? {} : { parse_mode: mode }, sig(signal));
        // Edited: a bot message that differed (ours, sent in the other form): it is the part.
        return true;
      } catch (error) {
        if (!(error instanceof GrammyError) || error.error_code !== 400) throw classifyTelegramError(error);
        if (/message is not modified/i.test(error.description)) return true;
        if (isParseError(error)) continue;
        return false;
      }
    }
    return false;
  }

  async typing(target: Record<string, string>, signal: AbortSignal): Promise<void> {
    const chat = chatTarget(target);
    await this.#api.sendChatAction(chat.chatId, 'typing', chat.threadId === undefined ? {} : { message_thread_id: chat.threadId }, sig(signal));
  }
}

function newest(ids: string[]): string | null {
  let best: number | null = null;
  for (const id of ids) {
    const value = Number(id);
    if (Number.isSafeInteger(value) && (best === null || value > best)) best = value;
  }
  return best === null ? null : String(best);
}
