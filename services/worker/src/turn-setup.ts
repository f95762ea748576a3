import { randomUUID } from 'node:crypto';
import { resumeTurn, startTurn } from '@herald/inbox';
import { recordCrashRecovery } from '@herald/telemetry';
import { planToolOffer } from '@herald/tools';
import { turnModels } from './profile-models.ts';
import type { TurnModels } from './profile-models.ts';
import { buildSessionPrompt } from './session-prompt.ts';
import { compactBeforeTurn } from './turn-compaction.ts';
import { beforeTurnProgress } from './turn-progress.ts';
import type { TurnCompaction } from './turn-compaction.ts';
import type { TurnContext, TurnInput, TurnResult, TurnShape } from './turn-context.ts';
import { shapeTurn } from './turn-shape.ts';

function compactionFor(input: TurnInput, tools: { offered: readonly string[]; sent: readonly string[] }, shape: TurnShape, models: TurnModels, turnId: string): TurnCompaction | undefined {
  const { deps, lease, session, events } = input;
  const { provider } = shape;
  if (provider === null) return undefined;
  const { config, db, logger } = deps;
  return {
    deps: {
      config,
      db,
      logger,
      summariser: models.summariser ?? provider,
      contextTokens: models.contextTokens,
      buildPrompt: () => buildSessionPrompt(deps, session, tools.offered, events[0]?.userId ?? '', shape.workspace, models.primaryRef),
      tools: deps.registry.definitions(tools.sent),
      transcripts: deps.transcripts,
      prices: deps.prices,
    },
    lease,
    model: provider.model,
    systemPrompt: session.systemPrompt,
    turnId,
    userId: events[0]?.userId ?? '',
  };
}

/**
 * The first step of a turn: starts it (or resumes a crashed one) with its shape, the tools it is
 * offered, a compression or a /compress before it, and the session's prompt on its first turn.
 * Returns the turn's result instead when a compression or a command answered the events.
 */
export async function setUpTurn(input: TurnInput): Promise<{ turn: TurnContext } | { done: TurnResult }> {
  const { deps, lease, session, events } = input;
  const { db } = deps;
  const eventIds = events.map((event) => event.id);
  const resumedTurnId = events.find((event) => event.turnId !== null)?.turnId ?? null;
  const turnId = resumedTurnId ?? randomUUID();
  // The session's profile may have its own models: its turns, children and summaries use them.
  const models = await turnModels(deps, session.profileId);
  const shape = await shapeTurn(input, models);
  const { offered, sent } = planToolOffer(deps.registry, shape.permitted(), deps.config.tools.toolSchemaBudget);
  const callerId = events[events.length - 1]?.userId ?? '';
  const compaction = compactionFor(input, { offered, sent }, shape, models, turnId);
  const turn: TurnContext = {
    ...input,
    turnId,
    eventIds,
    shape,
    offered,
    sent,
    callerId,
    compaction,
    attempts: 1,
    systemPrompt: session.systemPrompt,
    newPrompt: undefined,
    note: undefined,
    ineffective: undefined,
    history: undefined,
  };
  if (resumedTurnId !== null) {
    if (lease.tookOver) recordCrashRecovery();
    return { turn: { ...turn, attempts: await resumeTurn(db, lease, turnId) } };
  }
  const progress = beforeTurnProgress(deps, { sessionId: lease.sessionId, platform: session.platform, turnId, eventIds }, shape.drafted);
  const before = compaction ? await compactBeforeTurn(compaction, events, progress.shown) : undefined;
  await progress.close(before?.kind === 'go');
  if (before?.kind === 'compressed') return { done: { eventIds: before.answeredEventIds, outcome: 'compressed', childSessionId: before.childId } };
  if (before?.kind === 'answered') return { done: { eventIds: before.eventIds, outcome: 'command' } };
  const newPrompt = session.systemPrompt === null ? await buildSessionPrompt(deps, session, offered, events[0]?.userId ?? '', shape.workspace, models.primaryRef) : null;
  await startTurn(db, lease, turnId, eventIds, newPrompt);
  return {
    turn: {
      ...turn,
      note: before?.note,
      ineffective: before?.ineffective,
      history: before?.history,
      systemPrompt: newPrompt ?? session.systemPrompt,
      newPrompt: newPrompt ?? undefined,
    },
  };
}
