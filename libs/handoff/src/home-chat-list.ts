import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import type { HomeChat } from './home-chats.ts';

/** Every home chat of a profile, one per platform, by platform. */
export async function homeChatsOf(db: Kysely<Database> | Transaction<Database>, profileId: string): Promise<HomeChat[]> {
  const rows = await db.selectFrom('home_chats').select(['platform', 'account', 'chat_type', 'chat_id', 'thread_id']).where('profile_id', '=', profileId).orderBy('platform').execute();
  return rows.map((row) => ({ platform: row.platform, account: row.account, chatType: row.chat_type, chatId: row.chat_id, threadId: row.thread_id }));
}
