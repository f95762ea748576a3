import type { Logger } from '@herald/core';
import type { Db } from '@herald/db';
import { chatHasOpenOutbox, draftMessageIds, dropDrafts, recordDraftMessages, replyKeyOf } from '@herald/delivery';
import type { OutboundSender } from '@herald/delivery';
import { replyAnchorOf } from '@herald/session';
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
    const session = await replyAnchorOf(db, sessionId, eventIds);
    const calls = session === undefined ? undefined : senders.get(session.platform)?.drafts;
    if (session === undefined || calls === undefined || !this.covers(session.platform)) return undefined;
    const key = { replyKey: replyKeyOf(turnId), platform: session.platform, chatId: session.chatId };
    return new DraftStream({
      calls,
      // The account too: the draft is posted by the bot the conversation is on, as its answer will be.
      target: {
        ...(session.account ? { account: session.account } : {}),
        chatId: session.chatId,
        chatType: session.chatType,
        ...(session.threadId === null ? {} : { threadId: session.threadId }),
        ...(session.replyTo ? { replyTo: session.replyTo } : {}),
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
