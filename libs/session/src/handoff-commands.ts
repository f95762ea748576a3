import type { Transaction } from 'kysely';
import type { Database } from '@herald/db';
import { CHAT_PLATFORMS } from '@herald/delivery';
import { requestHandoff } from './handoff.ts';
import { setHomeChat } from './home-chats.ts';

// /sethome and /handoff <platform>, answered where the message arrives (docs/chat-commands.md).
// /handoff only files the request: a worker carries it out and the home chat hears of it.

export function handoffUsage(): string {
  return `Send /handoff <platform>, with one of: ${CHAT_PLATFORMS.join(', ')}.`;
}

export async function runHandoffCommand(
  trx: Transaction<Database>,
  sessionId: string,
  userId: string,
  command: { kind: 'sethome' } | { kind: 'handoff'; platform: string | undefined },
): Promise<{ reply: string }> {
  if (command.kind === 'sethome') {
    const home = await setHomeChat(trx, sessionId, userId);
    if (!(CHAT_PLATFORMS as readonly string[]).includes(home.platform)) {
      return { reply: `Noted, but /handoff only moves conversations to chat platforms (${CHAT_PLATFORMS.join(', ')}).` };
    }
    return { reply: `This chat is now the ${home.platform} home chat: /handoff ${home.platform} moves a conversation here.` };
  }
  const platform = command.platform;
  if (platform === undefined) return { reply: handoffUsage() };
  if (!(CHAT_PLATFORMS as readonly string[]).includes(platform)) return { reply: `Unknown platform '${platform}'. ${handoffUsage()}` };
  const outcome = await requestHandoff(trx, sessionId, platform, userId);
  if (outcome.kind === 'open') return { reply: `A handoff to ${outcome.handoff.platform} is already under way.` };
  if (outcome.kind !== 'requested') return { reply: 'This conversation has ended; nothing to hand off.' };
  return { reply: `Handing this conversation off to the ${platform} home chat (request ${outcome.handoff.id}).` };
}
