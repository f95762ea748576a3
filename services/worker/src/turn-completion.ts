import type { Logger } from '@herald/core';
import { sendRunFinished, SCHEDULED_PLATFORM } from '@herald/cron';
import { recordTurnCompletion } from '@herald/knowledge';
import type { Db } from '@herald/db';
import { publishTurnDone } from '@herald/queue';
import type { NoticeBus, RunQueue } from '@herald/queue';
import type { ToolRegistry } from '@herald/tools';
import type { TurnCompletionCounts } from '@herald/inbox';
import { wakeParentOf } from './subagent-turn.ts';
import type { TurnResult } from './turn-context.ts';

export interface CompletionDependencies {
  db: Db;
  registry: ToolRegistry;
  logger: Logger;
}

/** The completion event's flags for a turn's outcome: stopped and crashed turns are interrupted, the rest but answers errored. */
export function completionCounts(outcome: TurnResult['outcome'], turn: { profileId: string; userId: string; platform: string }): TurnCompletionCounts {
  return {
    profileId: turn.profileId,
    userId: turn.userId,
    interrupted: outcome === 'stopped' || outcome === 'attempts_exhausted',
    errored: outcome !== 'answered' && outcome !== 'stopped' && outcome !== 'attempts_exhausted',
    scheduled: turn.platform === SCHEDULED_PLATFORM,
  };
}

/**
 * The rest of a finished turn's completion event. The turn's last write recorded its counts
 * (herald_finish_turn_next). When a review is due, it recorded nothing and this records the event
 * again with the review row and its pg-boss job in one transaction; a scheduled run's turn also
 * sends the pg-boss job that finishes its cron run. Called after the reply is stored, and it never
 * throws: a review can never hold up or break a reply. If this worker dies before a due review is
 * recorded, that review comes one turn later; the scheduler's sweep sends a cron run's finish.
 */
export async function emitTurnCompletion(deps: CompletionDependencies, result: TurnResult): Promise<void> {
  const turn = result.turn;
  const due = result.next?.reviewDue;
  if (!turn || !result.next) return;
  const counts = completionCounts(result.outcome, turn);
  if (due === null) deps.logger.warn({ turnId: turn.turnId }, 'turn completion event not recorded; its counts are lost');
  try {
    if (due === true) {
      await deps.db.transaction().execute((trx) =>
        recordTurnCompletion(trx, {
          ...counts,
          turnId: turn.turnId,
          sessionId: turn.sessionId,
          userTurns: 1,
          iterations: turn.iterations,
          // The same call (and cache) the turn used, so the text is byte for byte what the model saw.
          toolDefinitions: () => JSON.stringify(deps.registry.definitions(turn.offered)),
        }),
      );
    }
    if (counts.scheduled) for (const eventId of result.eventIds) await sendRunFinished(deps.db, eventId);
  } catch (error) {
    deps.logger.warn({ err: error, turnId: turn.turnId }, 'turn completion event not recorded; its counts are lost');
  }
}

export interface HandOverDependencies extends CompletionDependencies {
  /** Where turn-done notices go (`<prefix>:turn-done`). */
  bus: NoticeBus;
  queuePrefix: string;
  /** Wakes the parent of a child run that ended; without it the reconciler does. */
  queue?: RunQueue | undefined;
}

/**
 * The last step of a turn, once the drain let the session go when it had nothing left: tells the
 * `?wait=N` callers, records the rest of the completion event, and wakes a child's parent.
 */
export async function handOverTurn(deps: HandOverDependencies, result: TurnResult): Promise<void> {
  await publishTurnDone(deps.bus, deps.queuePrefix, result.eventIds).catch((error: unknown) => deps.logger.warn({ err: error }, 'turn-done notice failed; waiters fall back to polling'));
  await emitTurnCompletion(deps, result);
  const { queue } = deps;
  if (queue && result.turn) await wakeParentOf(deps.db, queue, result.turn.platform, result.turn.sessionId, deps.logger);
}
