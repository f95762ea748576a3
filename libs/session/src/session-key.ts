import { DEFAULT_ACCOUNT } from '@herald/core';

export interface RouteAddress {
  profileId: string;
  platform: string;
  /** The platform account (bot) of a chat; unset or `default` for the platform's default one. */
  account?: string | undefined;
  chatType: string;
  chatId: string;
  threadId?: string | undefined;
}

/**
 * The deterministic key a chat maps to: `agent:<profile>:<platform>[@<account>]:<chat_type>:<chat_id>[:<thread_id>]`.
 * A route table maps it to the current session, so `/new` and handoffs move a pointer, not data.
 * A named account's chats have their own keys (the session's `account` column is read from it,
 * migrations/0070_platform_accounts.sql); the default account's keys are as they always were.
 */
export function sessionKey(address: RouteAddress): string {
  const named = address.account !== undefined && address.account !== DEFAULT_ACCOUNT;
  const parts = ['agent', address.profileId, named ? `${address.platform}@${address.account}` : address.platform, address.chatType, address.chatId];
  if (address.threadId !== undefined && address.threadId !== '') parts.push(address.threadId);
  return parts.join(':');
}
