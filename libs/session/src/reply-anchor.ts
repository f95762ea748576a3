import type { Db } from '@herald/db';

/** Where a session's answer goes in its chat, and the person's message it answers (the newest of the turn's events that has one). */
export interface ReplyAnchor {
  platform: string;
  /** The platform account (bot) the session's chat is on: `default` for the platform's own (sessions.account). */
  account: string | null;
  chatId: string;
  chatType: string;
  threadId: string | null;
  replyTo: string | null;
}

export async function replyAnchorOf(db: Db, sessionId: string, eventIds: readonly string[]): Promise<ReplyAnchor | undefined> {
  const session = await db.selectFrom('sessions').select(['platform', 'account', 'chat_id', 'chat_type', 'thread_id']).where('id', '=', sessionId).executeTakeFirst();
  if (!session) return undefined;
  const replyTo =
    eventIds.length === 0
      ? undefined
      : await db
          .selectFrom('inbound_events')
          .select('platform_message_id')
          .where('id', 'in', [...eventIds])
          .where('platform_message_id', 'is not', null)
          .orderBy('received_at', 'desc')
          .limit(1)
          .executeTakeFirst();
  return { platform: session.platform, account: session.account, chatId: session.chat_id, chatType: session.chat_type, threadId: session.thread_id, replyTo: replyTo?.platform_message_id ?? null };
}
