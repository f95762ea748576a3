import type { Logger } from '@herald/core';
import { sendRunFinished, SCHEDULED_PLATFORM } from '@herald/cron';
import { recordTurnCompletion } from '@herald/knowledge';
import type { Db } from '@herald/db';
import type { ToolRegistry } from '@herald/tools';
import type { TurnResult } from './turn-runner.ts';

export interface CompletionDependencies {
  db: Db;
  registry: ToolRegistry;
  logger: Logger;
}

/**
 * Emits the completion event of a finished turn, in the turn's last transaction: its counts go into
 * the session's review counters and, when a trigger fires, the review row and its pg-boss job are
 * created; a scheduled run's turn also sends the pg-boss job that finishes its cron run. Called
 * after the reply is stored, and it never throws: a review can never hold up or break a reply. If
 * this worker dies between the reply and this transaction, the turn's counts are lost (the next
 * review comes one turn later) and the scheduler's sweep sends the cron run's finish.
 */
export async function emitTurnCompletion(deps: CompletionDependencies, result: TurnResult): Promise<void> {
  const turn = result.turn;
  if (!turn) return;
  const scheduled = turn.platform === SCHEDULED_PLATFORM;
  const event = {
    turnId: turn.turnId,
    sessionId: turn.sessionId,
    profileId: turn.profileId,
    userId: turn.userId,
    userTurns: 1,
    iterations: turn.iterations,
    interrupted: result.outcome === 'stopped' || result.outcome === 'attempts_exhausted',
    errored: result.outcome !== 'answered' && result.outcome !== 'stopped' && result.outcome !== 'attempts_exhausted',
    scheduled,
    // The same call (and cache) the turn used, so the text is byte for byte what the model saw.
    toolDefinitions: () => JSON.stringify(deps.registry.definitions(turn.offered)),
  };
  try {
    // A scheduled run's finish job commits with its counts; any other turn needs no transaction of
    // its own (recordTurnCompletion opens one only for a review and its job).
    if (!scheduled) await recordTurnCompletion(deps.db, event);
    else {
      await deps.db.transaction().execute(async (trx) => {
        await recordTurnCompletion(trx, event);
        for (const eventId of result.eventIds) await sendRunFinished(trx, eventId);
      });
    }
  } catch (error) {
    deps.logger.warn({ err: error, turnId: turn.turnId }, 'turn completion event not recorded; its counts are lost');
  }
}
