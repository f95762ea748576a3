import type { Queue } from 'bullmq';
import type { Logger } from '@herald/core';
import { recordTurnCompletion } from '@herald/knowledge';
import type { Db } from '@herald/db';
import { enqueueReview } from '@herald/queue';
import type { ReviewJob } from '@herald/queue';
import type { ToolRegistry } from '@herald/tools';
import type { TurnResult } from './turn-runner.ts';

/** Sessions of these platforms are scheduled runs, which are never reviewed. */
export const SCHEDULED_PLATFORMS: ReadonlySet<string> = new Set(['cron']);

export interface CompletionDependencies {
  db: Db;
  registry: ToolRegistry;
  reviewQueue: Queue<ReviewJob> | null;
  logger: Logger;
}

/**
 * Emits the completion event of a finished turn: its counts go into the session's review counters
 * in Postgres and, when a trigger fires, a review row is created and its job queued. Called after
 * the reply is stored, and it never throws: a review can never hold up or break a reply. If this
 * worker dies between the reply and this call, the turn's counts are lost (the next review comes
 * one turn later); if it dies after the commit but before the enqueue, the reviewer's sweep finds
 * the pending row.
 */
export async function emitTurnCompletion(deps: CompletionDependencies, result: TurnResult): Promise<void> {
  const turn = result.turn;
  if (!turn) return;
  try {
    const outcome = await recordTurnCompletion(deps.db, {
      turnId: turn.turnId,
      sessionId: turn.sessionId,
      profileId: turn.profileId,
      userId: turn.userId,
      userTurns: 1,
      iterations: turn.iterations,
      interrupted: result.outcome === 'stopped' || result.outcome === 'attempts_exhausted',
      errored: result.outcome !== 'answered' && result.outcome !== 'stopped' && result.outcome !== 'attempts_exhausted',
      scheduled: SCHEDULED_PLATFORMS.has(turn.platform),
      // The same call (and cache) the turn used, so the text is byte for byte what the model saw.
      toolDefinitions: JSON.stringify(deps.registry.definitions(turn.offered)),
    });
    if (outcome.reviewId !== null && deps.reviewQueue !== null) {
      await enqueueReview(deps.reviewQueue, outcome.reviewId, 0).catch((error: unknown) =>
        deps.logger.warn({ err: error, reviewId: outcome.reviewId }, 'review enqueue failed; the reviewer sweep picks it up'),
      );
    }
  } catch (error) {
    deps.logger.warn({ err: error, turnId: turn.turnId }, 'turn completion event not recorded; its counts are lost');
  }
}

