import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/**
 * A streamed answer's draft messages (docs/decisions/2026-12-06-chat-drafts.md). A running turn posts
 * its text as it arrives into one or more messages of the chat and edits them; their ids are kept
 * here under the outbox key the turn's reply will have, so the reply's delivery edits those very
 * messages into the committed text (OutboundDelivery.drafts) instead of posting the answer twice,
 * whichever worker ran the turn to its end.
 */
export interface ChatDraftKey {
  /** The reply's outbox idempotency key: `reply:<turn_id>`. */
  replyKey: string;
  platform: string;
  chatId: string;
}

/** The outbox key of a turn's reply (herald_finish_turn writes the same). */
export function replyKeyOf(turnId: string): string {
  return `reply:${turnId}`;
}

/** The draft messages already posted for this reply, in order (a resumed turn continues them). */
export async function draftMessageIds(db: Kysely<Database>, replyKey: string): Promise<string[]> {
  const row = await db.selectFrom('chat_drafts').select('message_ids').where('reply_key', '=', replyKey).executeTakeFirst();
  return row?.message_ids ?? [];
}

/** Records the draft's messages after each new one is posted. */
export async function recordDraftMessages(db: Kysely<Database>, key: ChatDraftKey, messageIds: readonly string[]): Promise<void> {
  const ids = JSON.stringify(messageIds);
  await db
    .insertInto('chat_drafts')
    .values({ reply_key: key.replyKey, platform: key.platform, chat_id: key.chatId, message_ids: ids })
    .onConflict((oc) => oc.column('reply_key').doUpdateSet({ message_ids: ids, updated_at: sql`now()` }))
    .execute();
}

/** Forgets a reply's drafts: its delivery made them the answer, or the turn ended without one. */
export async function dropDrafts(db: Kysely<Database>, replyKey: string): Promise<void> {
  await db.deleteFrom('chat_drafts').where('reply_key', '=', replyKey).execute();
}

/** Draft messages of other replies in this chat: bot messages no outbox row may claim as its own. */
export async function otherDraftIds(db: Kysely<Database>, platform: string, chatId: string, replyKey: string): Promise<string[]> {
  const rows = await db.selectFrom('chat_drafts').select('message_ids').where('platform', '=', platform).where('chat_id', '=', chatId).where('reply_key', '!=', replyKey).execute();
  return rows.flatMap((row) => row.message_ids);
}

/**
 * Whether the chat has an outbox row still to go out. A draft is not started then: the earlier
 * message arrives first, and every bot message after a chat's last receipt stays the one open row's
 * own (what makes an ambiguous send reconcilable; libs/platforms telegram-sender.ts).
 */
export async function chatHasOpenOutbox(db: Kysely<Database>, platform: string, chatId: string): Promise<boolean> {
  const row = await db
    .selectFrom('outbox')
    .select('id')
    .where('platform', '=', platform)
    .where(sql<string>`target ->> 'chatId'`, '=', chatId)
    .where('status', 'in', ['pending', 'sending'])
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
