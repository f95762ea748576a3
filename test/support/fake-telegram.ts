import type { ServerResponse } from 'node:http';
import { sendJson, startFakeHttp } from './fake-http.ts';
import type { FakeHttpRequest } from './fake-http.ts';
import { parseMultipart } from './multipart.ts';

/**
 * A local stand-in for the Telegram Bot API, spoken to by grammy through `apiRoot`. It keeps chats
 * with per-chat sequential message ids (as Telegram does), serves getUpdates as a long poll, and
 * fails on demand: 429 with retry_after, 400 "can't parse entities", or a send that is stored but
 * never answered (the ambiguous timeout).
 */

export interface FakeUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}

export interface StoredMessage {
  message_id: number;
  chat_id: number;
  from: FakeUser;
  text: string;
  parse_mode?: string;
  message_thread_id?: number;
  reply_to?: number;
  /** Inline keyboard buttons sent with the message: `[[{text, callback_data}]]`. */
  reply_markup?: { inline_keyboard: { text: string; callback_data: string }[][] };
  /** A file the bot sent (sendDocument, sendPhoto), as uploaded. */
  file?: { method: string; name: string; bytes: Buffer };
}

/** A file a person sends: served through getFile and the Bot API's file endpoint. */
export interface FakeAttachment {
  kind: 'photo' | 'document' | 'voice' | 'audio';
  bytes: Buffer;
  name?: string;
  mime?: string;
  /** What the update claims as file_size (the real size unless a test lies). */
  size?: number;
}

export interface SentCall {
  method: string;
  body: Record<string, any>;
  messageId?: number;
  /** When the call arrived (performance.now()). */
  at: number;
}

export type Failure =
  | { kind: 'status'; code: number; description: string; retryAfter?: number }
  /** Store the message, then never answer: the sender cannot tell whether it arrived. */
  | { kind: 'store-then-hang' }
  /** Never answer and store nothing: it did not arrive. */
  | { kind: 'drop' };

export interface FakeTelegram {
  /** For TELEGRAM_API_ROOT. */
  apiRoot: string;
  token: string;
  /** The environment that points Herald's Telegram adapter at this fake. */
  env: Record<string, string>;
  bot: FakeUser;
  calls: SentCall[];
  chats: Map<number, StoredMessage[]>;
  webhook: { url: string; secret?: string } | null;
  /** The most getUpdates calls ever open at once (one poller per token means 1). */
  maxConcurrentPolls: number;
  /** Failures for the next calls of a method, in order. */
  failNext(method: string, ...failures: Failure[]): void;
  /** HTML that Telegram "cannot parse": sendMessage/editMessageText with parse_mode HTML fail. */
  rejectHtml: ((text: string) => boolean) | undefined;
  /** A person writes: returns the Update (queued for getUpdates too). */
  userMessage(options: UserMessageOptions): any;
  /** A person presses an inline button under one of the bot's messages: returns the Update. */
  pressButton(options: { chatId: number; messageId: number; from: { id: number; username?: string }; data: string }): any;
  /** Anything at all as the next update (a forged or malformed one): gets the next update_id unless it has one. */
  rawUpdate(update: Record<string, unknown>): any;
  /** The bot's messages in a chat, oldest first. */
  botMessages(chatId: number): StoredMessage[];
  /** How often each file path was downloaded from the file endpoint. */
  downloads: Map<string, number>;
  close(): Promise<void>;
}

export interface UserMessageOptions {
  chatId: number;
  chatType?: 'private' | 'group' | 'supergroup';
  from: { id: number; username?: string; first_name?: string };
  text: string;
  /** A forum topic: the message is a topic message of this thread. */
  threadId?: number;
  replyToMessageId?: number;
  /** Adds a mention entity of the bot's username at its position in text. */
  mentionBot?: boolean;
  /** A photo, document, voice note or audio file; the text becomes its caption. */
  attachment?: FakeAttachment;
}

export async function startFakeTelegram(options: { token?: string; username?: string } = {}): Promise<FakeTelegram> {
  const token = options.token ?? '123456:TEST-token_abc';
  const botId = Number(token.split(':')[0]);
  const bot: FakeUser = { id: botId, is_bot: true, first_name: 'Herald', username: options.username ?? 'herald_test_bot' };
  const chats = new Map<number, StoredMessage[]>();
  const counters = new Map<number, number>();
  const failures = new Map<string, Failure[]>();
  const updates: any[] = [];
  const pollWaiters = new Set<() => void>();
  let nextUpdateId = 1000;
  let openPolls = 0;
  const files = new Map<string, { bytes: Buffer; path: string }>();
  const fileFields = (attachment: FakeAttachment) => {
    const fileId = `file-${files.size + 1}`;
    const path = `${attachment.kind}s/file_${files.size + 1}`;
    files.set(fileId, { bytes: attachment.bytes, path });
    const base = { file_id: fileId, file_unique_id: `u${fileId}`, file_size: attachment.size ?? attachment.bytes.length };
    switch (attachment.kind) {
      case 'photo':
        return {
          photo: [
            { ...base, file_id: `${fileId}-thumb`, file_size: 10, width: 90, height: 90 },
            { ...base, width: 800, height: 600 },
          ],
        };
      case 'document':
        return { document: { ...base, file_name: attachment.name ?? 'file.bin', mime_type: attachment.mime ?? 'application/octet-stream' } };
      case 'voice':
        return { voice: { ...base, duration: 3, mime_type: 'audio/ogg' } };
      case 'audio':
        return { audio: { ...base, duration: 3, file_name: attachment.name, mime_type: attachment.mime ?? 'audio/mpeg' } };
    }
  };

  const nextMessageId = (chatId: number) => {
    const id = (counters.get(chatId) ?? 0) + 1;
    counters.set(chatId, id);
    return id;
  };
  const store = (message: StoredMessage) => {
    const list = chats.get(message.chat_id) ?? [];
    list.push(message);
    chats.set(message.chat_id, list);
  };
  const chatTypes = new Map<number, string>();
  const chatObject = (chatId: number) => {
    const type = chatTypes.get(chatId) ?? 'private';
    return type === 'private' ? { id: chatId, type, first_name: 'Person' } : { id: chatId, type, title: 'Team', is_forum: type === 'supergroup' };
  };
  const toApiMessage = (message: StoredMessage) => ({
    message_id: message.message_id,
    date: Math.floor(Date.now() / 1000),
    chat: chatObject(message.chat_id),
    from: message.from,
    text: message.text,
    ...(message.message_thread_id === undefined ? {} : { message_thread_id: message.message_thread_id, is_topic_message: true }),
  });

  const fake: FakeTelegram = {
    apiRoot: '',
    token,
    get env() {
      return { TELEGRAM_BOT_TOKEN: token, TELEGRAM_API_ROOT: fake.apiRoot };
    },
    bot,
    calls: [],
    chats,
    webhook: null,
    maxConcurrentPolls: 0,
    rejectHtml: undefined,
    failNext(method, ...more) {
      failures.set(method, [...(failures.get(method) ?? []), ...more]);
    },
    userMessage(o) {
      chatTypes.set(o.chatId, o.chatType ?? 'private');
      const from: FakeUser = { id: o.from.id, is_bot: false, first_name: o.from.first_name ?? 'Person', ...(o.from.username ? { username: o.from.username } : {}) };
      const messageId = nextMessageId(o.chatId);
      const stored: StoredMessage = { message_id: messageId, chat_id: o.chatId, from, text: o.text, ...(o.threadId === undefined ? {} : { message_thread_id: o.threadId }) };
      store(stored);
      const entities: any[] = [];
      if (o.text.startsWith('/')) entities.push({ type: 'bot_command', offset: 0, length: o.text.split(/\s/)[0]!.length });
      if (o.mentionBot) {
        const at = o.text.indexOf(`@${bot.username}`);
        if (at >= 0) entities.push({ type: 'mention', offset: at, length: bot.username!.length + 1 });
      }
      const replied = o.replyToMessageId === undefined ? undefined : chats.get(o.chatId)?.find((m) => m.message_id === o.replyToMessageId);
      const apiMessage: Record<string, unknown> = toApiMessage(stored);
      if (o.attachment) {
        delete apiMessage.text;
        Object.assign(apiMessage, fileFields(o.attachment), o.text === '' ? {} : { caption: o.text });
      }
      const update = {
        update_id: nextUpdateId++,
        message: {
          ...apiMessage,
          ...(entities.length > 0 ? { [o.attachment ? 'caption_entities' : 'entities']: entities } : {}),
          ...(replied ? { reply_to_message: toApiMessage(replied) } : {}),
        },
      };
      updates.push(update);
      for (const wake of pollWaiters) wake();
      return update;
    },
    pressButton(o) {
      const message = chats.get(o.chatId)?.find((m) => m.message_id === o.messageId);
      if (!message) throw new Error(`no message ${o.messageId} in chat ${o.chatId}`);
      const from: FakeUser = { id: o.from.id, is_bot: false, first_name: 'Person', ...(o.from.username ? { username: o.from.username } : {}) };
      const update = {
        update_id: nextUpdateId++,
        callback_query: { id: `cq-${nextUpdateId}`, from, chat_instance: String(o.chatId), data: o.data, message: toApiMessage(message) },
      };
      updates.push(update);
      for (const wake of pollWaiters) wake();
      return update;
    },
    rawUpdate(raw) {
      const update = { update_id: nextUpdateId++, ...raw };
      updates.push(update);
      for (const wake of pollWaiters) wake();
      return update;
    },
    downloads: new Map(),
    botMessages(chatId) {
      return (chats.get(chatId) ?? []).filter((message) => message.from.id === bot.id);
    },
    async close() {
      for (const wake of pollWaiters) wake();
      await http.close();
    },
  };

  const ok = (response: ServerResponse, result: unknown) => sendJson(response, 200, { ok: true, result });
  const fail = (response: ServerResponse, code: number, description: string, retryAfter?: number) =>
    sendJson(response, code, { ok: false, error_code: code, description, ...(retryAfter === undefined ? {} : { parameters: { retry_after: retryAfter } }) });
  const parseError = (body: Record<string, any>) => body.parse_mode === 'HTML' && fake.rejectHtml !== undefined && fake.rejectHtml(String(body.text));

  const serveFile = (path: string, response: ServerResponse) => {
    const file = [...files.values()].find((entry) => entry.path === path);
    if (!file) return fail(response, 404, 'Not Found');
    fake.downloads.set(path, (fake.downloads.get(path) ?? 0) + 1);
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.bytes.length });
    response.end(file.bytes);
  };
  /** sendDocument and sendPhoto arrive as multipart/form-data: the file part kept byte for byte. */
  const sendFile = (method: string, request: FakeHttpRequest, response: ServerResponse) => {
    const parts = parseMultipart(request.bytes, String(request.headers['content-type']));
    const field = (name: string) => parts.find((part) => part.name === name);
    const fileField = method === 'sendPhoto' ? 'photo' : 'document';
    const chatId = Number(field('chat_id')?.bytes.toString('utf8'));
    if (!chats.has(chatId)) return fail(response, 400, 'Bad Request: chat not found');
    // grammy sends the file as a separate part and names it in the field: attach://<part name>.
    const reference = field(fileField)?.bytes.toString('utf8') ?? '';
    const part = reference.startsWith('attach://') ? field(reference.slice('attach://'.length)) : field(fileField);
    if (!part?.filename) return fail(response, 400, `Bad Request: there is no ${fileField} in the request`);
    const caption = field('caption')?.bytes.toString('utf8');
    const message: StoredMessage = {
      message_id: nextMessageId(chatId),
      chat_id: chatId,
      from: bot,
      text: caption ?? '',
      file: { method, name: part.filename, bytes: part.bytes },
    };
    store(message);
    fake.calls[fake.calls.length - 1]!.messageId = message.message_id;
    return ok(response, toApiMessage(message));
  };

  // Its own record is `calls`: the shared server's log of every request (a soak polls for half an hour) is not kept.
  const http = await startFakeHttp(
    async (request, response) => {
      const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(request.path);
      if (download) return download[1] === token ? serveFile(download[2]!, response) : fail(response, 404, 'Not Found');
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.path);
      if (!match || match[1] !== token) return fail(response, 404, 'Not Found');
      const method = match[2]!;
      const body: Record<string, any> = request.body ?? {};
      const call: SentCall = { method, body, at: performance.now() };
      fake.calls.push(call);
      const failure = failures.get(method)?.shift();
      if (failure?.kind === 'status') return fail(response, failure.code, failure.description, failure.retryAfter);
      if (failure?.kind === 'drop') return; // no answer, nothing stored
      switch (method) {
        case 'getMe':
          return ok(response, { ...bot, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false });
        case 'setWebhook':
          fake.webhook = { url: String(body.url), ...(body.secret_token ? { secret: String(body.secret_token) } : {}) };
          return ok(response, true);
        case 'deleteWebhook':
          fake.webhook = null;
          return ok(response, true);
        case 'sendChatAction':
          return ok(response, true);
        case 'getUpdates': {
          if (fake.webhook) return fail(response, 409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
          openPolls++;
          fake.maxConcurrentPolls = Math.max(fake.maxConcurrentPolls, openPolls);
          try {
            const offset = typeof body.offset === 'number' ? body.offset : 0;
            // Confirmed updates are gone for good, as on Telegram.
            while (updates.length > 0 && updates[0].update_id < offset) updates.shift();
            if (updates.length === 0 && Number(body.timeout ?? 0) > 0) {
              await new Promise<void>((resolve) => {
                const timer = setTimeout(done, Number(body.timeout) * 1000);
                function done() {
                  clearTimeout(timer);
                  pollWaiters.delete(done);
                  resolve();
                }
                pollWaiters.add(done);
              });
            }
            return ok(response, updates.filter((update) => update.update_id >= offset).slice(0, Number(body.limit ?? 100)));
          } finally {
            openPolls--;
          }
        }
        case 'sendMessage': {
          const chatId = Number(body.chat_id);
          if (!chats.has(chatId)) return fail(response, 400, 'Bad Request: chat not found');
          if (String(body.text ?? '').length > 4096) return fail(response, 400, 'Bad Request: message is too long');
          if (parseError(body)) return fail(response, 400, "Bad Request: can't parse entities: Unsupported start tag at byte offset 0");
          const message: StoredMessage = {
            message_id: nextMessageId(chatId),
            chat_id: chatId,
            from: bot,
            text: String(body.text),
            ...(body.parse_mode ? { parse_mode: String(body.parse_mode) } : {}),
            ...(body.message_thread_id === undefined ? {} : { message_thread_id: Number(body.message_thread_id) }),
            ...(body.reply_parameters?.message_id === undefined ? {} : { reply_to: Number(body.reply_parameters.message_id) }),
            ...(body.reply_markup ? { reply_markup: body.reply_markup } : {}),
          };
          store(message);
          call.messageId = message.message_id;
          if (failure?.kind === 'store-then-hang') return; // it arrived; the answer never does
          return ok(response, toApiMessage(message));
        }
        case 'answerCallbackQuery':
          return ok(response, true);
        case 'getFile': {
          const file = files.get(String(body.file_id));
          if (!file) return fail(response, 400, 'Bad Request: invalid file_id');
          return ok(response, { file_id: body.file_id, file_unique_id: `u${body.file_id}`, file_size: file.bytes.length, file_path: file.path });
        }
        case 'sendDocument':
        case 'sendPhoto':
          return sendFile(method, request, response);
        case 'editMessageText': {
          const chatId = Number(body.chat_id);
          const message = chats.get(chatId)?.find((m) => m.message_id === Number(body.message_id));
          if (!message) return fail(response, 400, 'Bad Request: message to edit not found');
          if (message.from.id !== bot.id) return fail(response, 400, "Bad Request: message can't be edited");
          if (parseError(body)) return fail(response, 400, "Bad Request: can't parse entities: Unsupported start tag at byte offset 0");
          if (message.text === String(body.text) && (message.parse_mode ?? '') === String(body.parse_mode ?? '')) {
            return fail(
              response,
              400,
              'Bad Request: message is not modified: specified new message content and reply markup of the specified message are exactly the same as a current content and reply markup of the message',
            );
          }
          message.text = String(body.text);
          if (body.parse_mode) message.parse_mode = String(body.parse_mode);
          else delete message.parse_mode;
          if (body.reply_markup) message.reply_markup = body.reply_markup;
          return ok(response, toApiMessage(message));
        }
        case 'deleteMessage': {
          const messages = chats.get(Number(body.chat_id)) ?? [];
          const index = messages.findIndex((m) => m.message_id === Number(body.message_id));
          if (index < 0) return fail(response, 400, 'Bad Request: message to delete not found');
          messages.splice(index, 1);
          return ok(response, true);
        }
        default:
          return fail(response, 404, `Not Found: method ${method} is not faked`);
      }
    },
    { retainRequests: 0 },
  );
  fake.apiRoot = http.origin;
  return fake;
}
