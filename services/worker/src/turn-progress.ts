import type { Logger } from '@herald/core';
import { TurnStreamWriter } from '@herald/queue';
import type { CompressionStatus, TurnStreamStore } from '@herald/queue';
import { openDraft } from './turn-draft.ts';
import type { AnswerDrafts, DraftedTurn, TurnDraft } from './turn-draft.ts';

/**
 * What showing a turn's progress needs of TurnDependencies, named here: turn-context.ts imports
 * turn-compaction.ts, which uses this module, so importing it back would make a cycle.
 */
export interface ProgressDeps {
  stream?: TurnStreamStore | undefined;
  drafts?: AnswerDrafts | undefined;
  logger: Logger;
}

/** Shows a compression starting and ending to the turn's followers and its chat; resolves once followers can read it. */
export type CompressionShown = (status: CompressionStatus) => Promise<void>;

/** The turn's progress into its events' streams (for SSE followers and chat edits), when streaming is on. */
export function progressWriter(deps: ProgressDeps, turnId: string, eventIds: readonly string[]): TurnStreamWriter | undefined {
  if (!deps.stream) return undefined;
  return new TurnStreamWriter(deps.stream, eventIds, (error) => deps.logger.warn({ err: error, turnId }, 'turn stream write failed; followers see the reply when it is committed'));
}

/** A compression shown through the turn's stream writer and its chat draft (either may be absent). */
export function compressionShown(writer: TurnStreamWriter | undefined, draft: TurnDraft | undefined): CompressionShown {
  return async (status) => {
    writer?.write({ type: 'compression', status });
    draft?.take({ type: 'compression', status });
    // The end is in the store before what follows it (the child's turn, the reply) is committed.
    if (status === 'done') await writer?.flush();
  };
}

/** Runs `compress` between a shown start and end; the end is shown when it fails too. */
export async function whileShown<T>(shown: CompressionShown | undefined, compress: () => Promise<T>): Promise<T> {
  await shown?.('start');
  try {
    return await compress();
  } finally {
    await shown?.('done');
  }
}

/** A compression before the turn, shown once one starts: the writer and the chat's draft are opened only then. */
export interface BeforeTurnProgress {
  shown: CompressionShown;
  /**
   * The start of the turn is over: when the turn goes on here, its draft continues the message shown
   * (the same turn, the same draft); otherwise (compressed into a child, or a command answered) the
   * message is taken back out of the chat.
   */
  close(goesOn: boolean): Promise<void>;
}

/** `drafted`: the turn's answer is shown growing in its chat (TurnShape.drafted). */
export function beforeTurnProgress(deps: ProgressDeps, turn: DraftedTurn, drafted: boolean): BeforeTurnProgress {
  let opened: Promise<CompressionShown> | undefined;
  let draft: TurnDraft | undefined;
  const open = async () => {
    const writer = progressWriter(deps, turn.turnId, turn.eventIds);
    draft = drafted ? await openDraft(deps.drafts, deps.logger, turn) : undefined;
    return compressionShown(writer, draft);
  };
  return {
    shown: async (status) => (await (opened ??= open()))(status),
    async close(goesOn) {
      if (!draft) return;
      await (goesOn ? draft.settle() : draft.discard());
    },
  };
}
