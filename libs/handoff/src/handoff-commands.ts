import type { Transaction } from 'kysely';
import type { Database } from '@herald/db';
import { CHAT_PLATFORMS, isChatPlatform } from '@herald/core';
import { requestHandoff } from './handoff.ts';
import { setHomeChat } from './home-chats.ts';

// /sethome and /handoff <platform>, answered where the message arrives (docs/chat-commands.md).
// /handoff only files the request: a worker carries it out and the home chat hears of it.

/** What someone who may not set a home chat is told; home_chats is unchanged. */
export const SETHOME_OPERATORS_ONLY_REPLY = 'Only an operator (listed in HERALD_OPERATORS) can set the home chat, where /handoff sends conversations; nothing changed.';

/** What someone who may not move a group's conversation is told; no handoff is requested. */
export const HANDOFF_NOT_YOURS_REPLY = 'Only the person who started this conversation, or an operator, can hand it off; nothing changed.';

export function handoffUsage(): string {
  return `Send /handoff <platform>, with one of: ${CHAT_PLATFORMS.join(', ')}.`;
}

/**
 * The home chat is profile-wide: it receives every later /handoff, other people's conversations
 * included. Once a deployment names operators, only they choose it; with none named (one person,
 * or a first run) nobody could, so anyone may, as before.
 */
function maySetHome(userId: string, operators: readonly string[]): boolean {
  return operators.length === 0 || operators.includes(userId);
}

/**
 * A handoff takes the conversation away from everyone in the chat. In a DM that is only its
 * person; in a group or channel it is the person who started the session (ids are qualified by
 * platform, as in herald_may_answer_wait) or an operator.
 */
async function mayHandOff(trx: Transaction<Database>, sessionId: string, userId: string, operators: readonly string[]): Promise<boolean> {
  if (operators.includes(userId)) return true;
  const session = await trx.selectFrom('sessions').select(['chat_type', 'origin_user_id']).where('id', '=', sessionId).executeTakeFirstOrThrow();
  return session.chat_type === 'dm' || session.origin_user_id === userId;
}

export async function runHandoffCommand(
  trx: Transaction<Database>,
  sessionId: string,
  userId: string,
  operators: readonly string[],
  command: { kind: 'sethome' } | { kind: 'handoff'; platform: string | undefined },
): Promise<{ reply: string }> {
  if (command.kind === 'sethome') {
    if (!maySetHome(userId, operators)) return { reply: SETHOME_OPERATORS_ONLY_REPLY };
    const home = await setHomeChat(trx, sessionId, userId);
    if (!isChatPlatform(home.platform)) {
      return { reply: `Noted, but /handoff only moves conversations to chat platforms (${CHAT_PLATFORMS.join(', ')}).` };
    }
    return { reply: `This chat is now the ${home.platform} home chat: /handoff ${home.platform} moves a conversation here.` };
  }
  const platform = command.platform;
  if (platform === undefined) return { reply: handoffUsage() };
  if (!isChatPlatform(platform)) return { reply: `Unknown platform '${platform}'. ${handoffUsage()}` };
  if (!(await mayHandOff(trx, sessionId, userId, operators))) return { reply: HANDOFF_NOT_YOURS_REPLY };
  const outcome = await requestHandoff(trx, sessionId, platform, userId, operators.includes(userId));
  if (outcome.kind === 'open') return { reply: `A handoff to ${outcome.handoff.platform} is already under way.` };
  if (outcome.kind !== 'requested') return { reply: 'This conversation has ended; nothing to hand off.' };
  return { reply: `Handing this conversation off to the ${platform} home chat (request ${outcome.handoff.id}).` };
}
