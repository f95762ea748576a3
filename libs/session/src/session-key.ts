export interface RouteAddress {
  profileId: string;
  platform: string;
  chatType: string;
  chatId: string;
  threadId?: string | undefined;
}

/**
 * The deterministic key a chat maps to: `agent:<profile>:<platform>:<chat_type>:<chat_id>[:<thread_id>]`.
 * A route table maps it to the current session, so `/new` and handoffs move a pointer, not data.
 */
export function sessionKey(address: RouteAddress): string {
  const parts = ['agent', address.profileId, address.platform, address.chatType, address.chatId];
  if (address.threadId !== undefined && address.threadId !== '') parts.push(address.threadId);
  return parts.join(':');
}
