import type { Logger } from '@herald/core';
import type { Db } from '@herald/db';
import { chatHasOpenOutbox, draftMessageIds, dropDrafts, recordDraftMessages, replyKeyOf } from '@herald/delivery';
import type { OutboundSender } from '@herald/delivery';
import { DEFAULT_PACING, DraftStream } from './draft-stream.ts';
import type { DraftPacing } from './draft-stream.ts';

export interface DraftStreamsOptions {
  db: Db;
  /** The platforms' senders; a sender with draft calls can be streamed to. */
  senders: ReadonlyMap<string, OutboundSender>;
  /** Platforms whose chats see answers grow (HERALD_STREAMING and HERALD_STREAMING_<PLATFORM>). */
  streamed: ReadonlySet<string>;
  logger: Logger;
  pacing?: DraftPacing;
}

/**
 * Opens a turn's draft in its chat, where the session is a chat on a platform streamed to; the
 * worker running the turn feeds it (docs/decisions/2026-12-06-chat-drafts.md).
 */
export class DraftStreams {
  readonly #options: DraftStreamsOptions;

  constructor(options: DraftStreamsOptions) {
    this.#options = options;
  }

  /** Whether a session on this platform would get a draft: no query is made for the others. */
  covers(platform: string): boolean {
    return this.#options.streamed.has(platform) && this.#options.senders.get(platform)?.drafts !== undefined;
  }

  async open(sessionId: string, turnId: string, eventIds: readonly string[]): Promise<DraftStream | undefined> {
    const { db, senders, logger } = this.#options;
    const session = await db
      .selectFrom('sessions')
      .select(['platform', 'chat_id', 'chat_type', 'thread_id'])
      .where('id', '=', sessionId)
      .executeTakeFirst();
    const calls = session === undefined ? undefined : senders.get(session.platform)?.drafts;
    if (session === undefined || calls === undefined || !this.covers(session.platform)) return undefined;
    const replyTo = eventIds.length === 0 ? undefined : await db
      .selectFrom('inbound_events')
      .select('platform_message_id')
      .where('id', 'in', [...eventIds])
      .where('platform_message_id', 'is not', null)
      .orderBy('received_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    const key = { replyKey: replyKeyOf(turnId), platform: session.platform, chatId: session.chat_id };
    return new DraftStream({
      calls,
      target: {
        chatId: session.chat_id,
        chatType: session.chat_type,
        ...(session.thread_id === null ? {} : { threadId: session.thread_id }),
        ...(replyTo?.platform_message_id ? { replyTo: replyTo.platform_message_id } : {}),
      },
      messageIds: await draftMessageIds(db, key.replyKey),
      record: (ids) => recordDraftMessages(db, key, ids),
      forget: () => dropDrafts(db, key.replyKey),
      mayStart: async () => !(await chatHasOpenOutbox(db, key.platform, key.chatId)),
      pacing: this.#options.pacing ?? DEFAULT_PACING,
      logger: logger.child({ sessionId, turnId, component: 'draft' }),
    });
  }
}
