import { isChatPlatform, storedTarget } from '@herald/core';
import type { Database, StoredFile } from '@herald/db';
import { enqueueOutbound } from '@herald/delivery';
import type { Kysely } from 'kysely';

/**
 * Queues a file for the chat a session is routed to, through the outbox like a reply (receipts,
 * retries, one row per key). Returns false when the session is not a chat (the API, a scheduled
 * run): there is no chat to send it to.
 */
export async function enqueueSessionFile(db: Kysely<Database>, request: { sessionId: string; idempotencyKey: string; file: StoredFile; caption: string }): Promise<boolean> {
  const session = await db.selectFrom('sessions').select(['platform', 'chat_id', 'chat_type', 'thread_id']).where('id', '=', request.sessionId).executeTakeFirst();
  if (!session || !isChatPlatform(session.platform)) return false;
  await enqueueOutbound(db, {
    idempotencyKey: request.idempotencyKey,
    platform: session.platform,
    target: storedTarget({ chatId: session.chat_id, chatType: session.chat_type, threadId: session.thread_id ?? undefined }),
    text: request.caption,
    sessionId: request.sessionId,
    source: 'file',
    file: request.file,
  });
  return true;
}
