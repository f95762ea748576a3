import type { LoopResult } from '@herald/agent';
import { finishTurn, suspendTurn } from '@herald/inbox';
import { warnBudgets } from '@herald/limits';
import type { WaitRequest } from '@herald/tools';
import { subagentEvent } from './subagent-turn.ts';
import { completionCounts } from './turn-completion.ts';
import type { Ending, OpenedTurn, TurnContext, TurnDependencies, TurnResult } from './turn-context.ts';
import { modelCallRow } from '@herald/agent';
import { waitNotice } from './wait-notice.ts';

/** Before the loop opened (attempts spent, no model): no hooks, no draft, the turn's own events. */
export function notOpened(turn: TurnContext): OpenedTurn {
  return { hooks: null, draft: undefined, eventIds: turn.eventIds };
}

/** The 80% warning for what the turn's last call spent, after the reply; its failure never touches the reply. */
async function warnAfterTurn(deps: TurnDependencies, context: Parameters<typeof warnBudgets>[1]): Promise<void> {
  await warnBudgets(deps.db, context).catch((error: unknown) => deps.logger.warn({ err: error, sessionId: context.sessionId }, 'budget warning failed; the next model call tries again'));
}

/** Ends the turn with its reply stored on the events (a compression's notice appended). */
export async function endTurn(turn: TurnContext, opened: OpenedTurn, ending: Ending): Promise<TurnResult> {
  const { deps, lease, session, events, turnId, shape } = turn;
  const { text, outcome, iterations, note } = ending;
  if (shape.run) await opened.hooks?.once('subagent_stop', subagentEvent(shape.run, outcome));
  const failed = outcome !== 'answered' && outcome !== 'iteration_limit' && outcome !== 'tool_errors';
  const userId = events[events.length - 1]?.userId ?? '';
  const eventIds = [...opened.eventIds];
  const done = { turnId, sessionId: lease.sessionId, iterations, profileId: session.profileId, userId, platform: session.platform, offered: turn.sent };
  // No text, no outbox row to edit the draft into (a tool line was all it showed): take it back.
  if (text.trim() === '' && note === undefined) await opened.draft?.discard();
  const next = await finishTurn(deps.db, lease, turnId, eventIds, {
    reply: note === undefined ? text : `${text}\n\n${note}`,
    failed,
    error: failed ? outcome : outcome === 'iteration_limit' ? shape.iterationLimitError : null,
    iterations,
    modelCall: modelCallRow(ending.finalCall, deps.prices),
    completion: completionCounts(outcome, done),
  });
  await warnAfterTurn(deps, { userId: turn.callerId, profileId: session.profileId, sessionId: lease.sessionId, turnId, budgets: deps.config.usage.budgets, profiles: deps.profiles });
  return { eventIds, outcome, turn: done, next };
}

/**
 * Parks the turn on a person (an approval, a question) or on child runs: nothing holds the worker
 * or the lease while they decide; an answer, /approve, /deny or the timeout makes the turn
 * runnable and any worker resumes it.
 */
export async function parkTurn(turn: TurnContext, opened: OpenedTurn, wait: NonNullable<LoopResult<WaitRequest>['wait']>): Promise<TurnResult> {
  const { deps, lease, turnId } = turn;
  const { request, notStarted } = wait;
  // The question goes out next; the answer is drafted anew below it when the turn resumes.
  await opened.draft?.discard();
  await suspendTurn(deps.db, lease, turnId, { ...request, notStarted }, waitNotice(request));
  deps.logger.info({ sessionId: lease.sessionId, turnId, kind: request.kind, tool: request.toolName }, 'turn waiting for the person');
  return { eventIds: [...opened.eventIds], outcome: 'waiting' };
}
