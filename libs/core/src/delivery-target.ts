import { CHAT_PLATFORMS, DEFAULT_ACCOUNT, isChatPlatform } from './platform-registry.ts';
import type { ChatPlatform } from './platform-registry.ts';

/**
 * The one delivery target: where a message to a chat goes. Stored as the outbox row's `target`
 * (jsonb of strings, the platform in its own column); written by people as
 * `<platform>[@<account>]:<chat_id>[:<thread_id>]` (cron's `deliver`, handoff homes). Every reader
 * and writer of either form goes through this module, and the turn's SQL functions take it as data.
 * The account is the bot a message leaves through; unset, the platform's default one.
 */
export interface ChatAddress {
  /** The platform account (one bot of the platform, HERALD_PLATFORMS_FILE); unset: `default`. */
  account?: string | undefined;
  chatId: string;
  chatType?: string | undefined;
  threadId?: string | undefined;
}

export interface DeliveryTarget extends ChatAddress {
  /** The platform's id of the message this one answers (a reply thread). */
  replyTo?: string | undefined;
  /** Adapter-specific routing (a Discord interaction's token), passed through as stored. */
  via?: Readonly<Record<string, string>> | undefined;
}

/** The stored form: only what is set, every value a string (the outbox `target` column). */
export function storedTarget(target: DeliveryTarget): Record<string, string> {
  return {
    ...(target.account === undefined || target.account === DEFAULT_ACCOUNT ? {} : { account: target.account }),
    chatId: target.chatId,
    ...(target.chatType === undefined ? {} : { chatType: target.chatType }),
    ...(target.threadId === undefined || target.threadId === '' ? {} : { threadId: target.threadId }),
    ...(target.replyTo === undefined ? {} : { replyTo: target.replyTo }),
    ...target.via,
  };
}

const KNOWN_KEYS = new Set(['account', 'chatId', 'chatType', 'threadId', 'replyTo']);

/** A stored target read back; undefined when it names no chat (such a row can never be sent). */
export function readStoredTarget(stored: Readonly<Record<string, string>>): DeliveryTarget | undefined {
  const chatId = stored.chatId;
  if (chatId === undefined || chatId === '') return undefined;
  const via = Object.fromEntries(Object.entries(stored).filter(([key]) => !KNOWN_KEYS.has(key)));
  return {
    ...(stored.account === undefined ? {} : { account: stored.account }),
    chatId,
    ...(stored.chatType === undefined ? {} : { chatType: stored.chatType }),
    ...(stored.threadId === undefined ? {} : { threadId: stored.threadId }),
    ...(stored.replyTo === undefined ? {} : { replyTo: stored.replyTo }),
    ...(Object.keys(via).length === 0 ? {} : { via }),
  };
}

/** A chat named in text: `<platform>[@<account>]:<chat_id>[:<thread_id>]`. */
export interface NamedChat {
  platform: ChatPlatform;
  /** Set when the text names an account (`telegram@ops:42`); unset means the default one. */
  account?: string;
  chatId: string;
  threadId?: string;
}

export class TargetSyntaxError extends Error {
  override readonly name = 'TargetSyntaxError';
}

const CHAT_ID = /^-?[A-Za-z0-9_@.-]{1,128}$/;

/** An account's name (HERALD_PLATFORMS_FILE `account:`): lowercase letters, digits, - and _. */
export const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** Reads `telegram:-100123:7` or `telegram@ops:42`; the platform must be a chat platform, the ids plain. */
export function parseNamedChat(text: string): NamedChat {
  const [head = '', chatId, threadId, extra] = text.split(':');
  const at = head.indexOf('@');
  const platform = at < 0 ? head : head.slice(0, at);
  const account = at < 0 ? undefined : head.slice(at + 1);
  const lower = platform.toLowerCase();
  if (!isChatPlatform(lower)) throw new TargetSyntaxError(`'${platform}' is not a chat platform (${CHAT_PLATFORMS.join(', ')})`);
  if (account !== undefined && !ACCOUNT_NAME.test(account)) {
    throw new TargetSyntaxError(`cannot read '${text}': after ${lower}@ comes an account name (lowercase letters, digits, - and _)`);
  }
  if (!chatId || !CHAT_ID.test(chatId) || (threadId !== undefined && !CHAT_ID.test(threadId)) || extra !== undefined) {
    throw new TargetSyntaxError(`cannot read '${text}': write ${lower}[@<account>]:<chat_id> or ${lower}[@<account>]:<chat_id>:<thread_id>`);
  }
  return { platform: lower, ...(account === undefined || account === DEFAULT_ACCOUNT ? {} : { account }), chatId, ...(threadId ? { threadId } : {}) };
}

/** The text form of a named chat, as parseNamedChat reads it (the default account left out). */
export function formatNamedChat(chat: { platform: string; account?: string | undefined; chatId: string; threadId?: string | undefined }): string {
  const account = chat.account === undefined || chat.account === DEFAULT_ACCOUNT ? '' : `@${chat.account}`;
  return `${chat.platform}${account}:${chat.chatId}${chat.threadId ? `:${chat.threadId}` : ''}`;
}
