import type { Kysely, Transaction } from 'kysely';
import { DEFAULT_ACCOUNT } from '@herald/core';
import type { Database } from '@herald/db';

// A profile's home chat on a platform (Hermes' home channel): set by /sethome in that chat, and
// where /handoff <platform> moves a session.

export interface HomeChat {
  platform: string;
  /** The platform account (bot) the chat is on: `default` for the platform's own token. */
  account: string;
  chatType: string;
  chatId: string;
  threadId: string | null;
}

/** Makes the chat of `sessionId` its profile's home chat on the session's platform. */
export async function setHomeChat(trx: Transaction<Database>, sessionId: string, setBy: string): Promise<HomeChat & { profileId: string }> {
  const session = await trx.selectFrom('sessions').select(['profile_id', 'platform', 'account', 'chat_type', 'chat_id', 'thread_id']).where('id', '=', sessionId).executeTakeFirstOrThrow();
  const account = session.account ?? DEFAULT_ACCOUNT;
  const home = { account, chat_type: session.chat_type, chat_id: session.chat_id, thread_id: session.thread_id, set_by: setBy, updated_at: new Date() };
  await trx
    .insertInto('home_chats')
    .values({ profile_id: session.profile_id, platform: session.platform, ...home })
    .onConflict((conflict) => conflict.columns(['profile_id', 'platform']).doUpdateSet(home))
    .execute();
  return { profileId: session.profile_id, platform: session.platform, account, chatType: session.chat_type, chatId: session.chat_id, threadId: session.thread_id };
}

export async function homeChat(db: Kysely<Database> | Transaction<Database>, profileId: string, platform: string): Promise<HomeChat | undefined> {
  const row = await db
    .selectFrom('home_chats')
    .select(['platform', 'account', 'chat_type', 'chat_id', 'thread_id'])
    .where('profile_id', '=', profileId)
    .where('platform', '=', platform)
    .executeTakeFirst();
  return row === undefined ? undefined : { platform: row.platform, account: row.account, chatType: row.chat_type, chatId: row.chat_id, threadId: row.thread_id };
}
