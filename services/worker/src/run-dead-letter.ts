import type { Logger } from '@herald/core';
import type { Db } from '@herald/db';
import { failOpenWork, failureReason, oldestOpenEvent, recordFailure } from '@herald/session';

export const RUN_DEAD_LETTER_REPLY =
  'Sorry, I could not finish this: answering it failed twice the same way, so I stopped trying. The error is recorded for the operator; please send it again or rephrase.';

/**
 * A drain that failed with an error of its own (not a storage outage, not a lost lease): counted
 * against the session's oldest open turn (or event). The second failure with the same reason makes
 * it a dead letter: its events end `failed` with the reason and the reply above, its turn ends
 * `failed`, and the job completes instead of being retried (and re-found by the reconciler)
 * forever. True when that happened.
 */
export async function deadLetterRun(db: Db, sessionId: string, error: unknown, logger: Logger): Promise<boolean> {
  const oldest = await oldestOpenEvent(db, sessionId);
  if (!oldest) return false;
  const key = oldest.turnId ?? oldest.id;
  const reason = failureReason(error);
  const strike = await recordFailure(db, { source: 'run', key, reason, sessionId });
  if (!strike.dead) return false;
  await failOpenWork(db, sessionId, oldest, reason, RUN_DEAD_LETTER_REPLY);
  logger.error({ sessionId, key, reason }, 'run dead-lettered: failed twice the same way; the session goes on with its next message');
  return true;
}
