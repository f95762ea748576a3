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

/**
 * A chat named in text: `<platform>[@<account>]:<chat_id>[:<thread_id>]`. The account is the bot
 * (platform account) that posts; left out, it is the platform's `default` one.
 */
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
/** A platform account's name: the word after `@` in `slack@ops:C123`. */
export const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Splits `slack@ops` into the platform and its account (undefined when none is named). */
export function splitPlatformAccount(text: string): { platform: string; account: string | undefined } {
  const at = text.indexOf('@');
  return at < 0 ? { platform: text, account: undefined } : { platform: text.slice(0, at), account: text.slice(at + 1) };
}

/** Reads `telegram:-100123:7` or `slack@ops:C123:1700000000.000100`; the platform must be a chat platform, the ids plain. */
export function parseNamedChat(text: string): NamedChat {
  const [prefix = '', chatId, threadId, extra] = text.split(':');
  // The platform's name is read in any case; an account's name is lowercase by definition (ACCOUNT_NAME).
  const split = splitPlatformAccount(prefix);
  const platform = split.platform.toLowerCase();
  const account = split.account;
  if (!isChatPlatform(platform)) throw new TargetSyntaxError(`'${prefix}' is not a chat platform (${CHAT_PLATFORMS.join(', ')})`);
  if (account !== undefined && !ACCOUNT_NAME.test(account)) {
    throw new TargetSyntaxError(`'${account}' is not an account name: write ${platform}@<account>:<chat_id> with a-z, 0-9, _ and -`);
  }
  if (!chatId || !CHAT_ID.test(chatId) || (threadId !== undefined && !CHAT_ID.test(threadId)) || extra !== undefined) {
    throw new TargetSyntaxError(`cannot read '${text}': write ${platform}:<chat_id> or ${platform}:<chat_id>:<thread_id>`);
  }
  return { platform, chatId, ...(threadId ? { threadId } : {}), ...(account === undefined || account === DEFAULT_ACCOUNT ? {} : { account }) };
}

/** The text form of a named chat, as parseNamedChat reads it. */
export function formatNamedChat(chat: { platform: string; chatId: string; threadId?: string | undefined; account?: string | undefined }): string {
  const account = chat.account === undefined || chat.account === DEFAULT_ACCOUNT ? '' : `@${chat.account}`;
  return `${chat.platform}${account}:${chat.chatId}${chat.threadId ? `:${chat.threadId}` : ''}`;
}
