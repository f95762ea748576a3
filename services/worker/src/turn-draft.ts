import type { Logger } from '@herald/core';
import type { StreamView } from '@herald/queue';

/**
 * A turn's answer shown growing in its chat (libs/platforms draft-stream.ts; docs/decisions/
 * 2026-12-06-chat-drafts.md). The worker running the turn feeds it what the model writes and which
 * tools run; the committed reply's delivery edits it into the answer.
 */
export interface TurnDraft {
  take(view: StreamView): void;
  /** Lets the edit in progress finish and stops the next: before the reply commits. */
  settle(): Promise<void>;
  /** Removes it from the chat: the turn paused for a person, or its answer comes from elsewhere. */
  discard(): Promise<void>;
}

/** Opens drafts for the chats of the platforms streamed to (DraftStreams in @herald/platforms). */
export interface AnswerDrafts {
  covers(platform: string): boolean;
  open(sessionId: string, turnId: string, eventIds: readonly string[]): Promise<TurnDraft | undefined>;
}

/** The turn a draft is opened for. */
export interface DraftedTurn {
  sessionId: string;
  platform: string;
  turnId: string;
  eventIds: readonly string[];
}

/** The turn's draft, when its session is a chat streamed to; a failure to open one costs only the draft. */
export async function openDraft(drafts: AnswerDrafts | undefined, logger: Logger, turn: DraftedTurn): Promise<TurnDraft | undefined> {
  if (!drafts || !drafts.covers(turn.platform)) return undefined;
  return drafts.open(turn.sessionId, turn.turnId, turn.eventIds).catch((error: unknown) => {
    logger.warn({ err: error, sessionId: turn.sessionId }, 'could not open the answer draft; the reply arrives when committed');
    return undefined;
  });
}
