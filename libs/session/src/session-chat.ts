import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** Where a session talks: its platform, the account (bot) it is on, and the chat. */
export interface SessionChat {
  platform: string;
  account: string | null;
  chatType: string;
  chatId: string;
  threadId: string | null;
}

export async function sessionChat(db: Kysely<Database> | Transaction<Database>, sessionId: string): Promise<SessionChat | undefined> {
  const row = await db.selectFrom('sessions').select(['platform', 'account', 'chat_type', 'chat_id', 'thread_id']).where('id', '=', sessionId).executeTakeFirst();
  return row ? { platform: row.platform, account: row.account, chatType: row.chat_type, chatId: row.chat_id, threadId: row.thread_id } : undefined;
}
