import type { TurnDraft } from './turn-draft.ts';
import { randomUUID } from 'node:crypto';
import type { Logger } from '@herald/core';
import { resumeTurn, startTurn } from '@herald/session';
import type { Lease, LeasedSession, PendingEvent } from '@herald/session';
import { scheduledRunFor, SCHEDULED_PLATFORM } from '@herald/cron';
import { recordCrashRecovery } from '@herald/telemetry';
import { planToolOffer, toolPolicySchema } from '@herald/tools';
import type { CallerRole, ToolPolicy } from '@herald/tools';
import { buildSessionPrompt, sessionWorkspace } from './session-prompt.ts';
import { compactBeforeTurn } from './turn-compaction.ts';
import type { TurnCompaction } from './turn-compaction.ts';
import type { TurnDependencies, TurnResult } from './turn-runner.ts';
import type { ChatMessage, Provider } from '@herald/agent';
import { providerFor, turnShapeOf } from './subagent-turn.ts';
import type { TurnShape } from './subagent-turn.ts';
import type { TurnHooks } from './turn-hooks.ts';
import { turnModels } from './profile-models.ts';
import type { TurnModels } from './profile-models.ts';

/** Who runs this turn and what it is offered, fixed when it starts. */
export interface TurnSetup {
  turnId: string;
  /** The turn's events; steered messages join it while it runs. */
  eventIds: string[];
  role: CallerRole;
  policy: ToolPolicy;
  jobToolsets: readonly string[] | undefined;
  /** A child of delegate_task: its own role, tools, budget, model and workspace (subagent-turn.ts). */
  shape: TurnShape;
  /** The model this turn calls: the children's own model for a child, else the main one. */
  provider: Provider | null;
  /** The turn's hooks once the loop opened them (subagent_stop fires from the finish). */
  hooks: TurnHooks | null;
  /** The answer shown growing in the session's chat, once the loop opened it (turn-draft.ts). */
  draft?: TurnDraft | undefined;
  /** Offered to the model: the session-wide set, so every person in a chat sees the same prefix. */
  offered: string[];
  /** The tools whose definitions every request carries: all offered, unless the schema budget defers some to tool_search. */
  sent: string[];
  callerId: string;
  compaction: TurnCompaction | undefined;
  /** Appended to the reply (a compression's notice). */
  note: string | undefined;
  /** The session's ineffective compressions, when the start of the turn read them already. */
  ineffective: number | undefined;
  /** The transcript before this turn's messages, when the start of the turn read it already. */
  history: ChatMessage[] | undefined;
  /** The session's workspace directory (a child of delegate_task may share its parent's). */
  workspace: string;
  attempts: number;
}

function parsePolicy(stored: Record<string, unknown>, logger: Logger, profileId: string): ToolPolicy {
  const parsed = toolPolicySchema.safeParse(stored);
  if (parsed.success) return parsed.data;
  // The API validates policies on write; a hand-edited bad one must not widen anything.
  logger.error({ profileId, issues: parsed.error.issues }, 'stored tool policy is invalid; offering the safe toolset only');
  return { enabled: ['safe'] };
}

function compactionFor(
  deps: TurnDependencies,
  lease: Lease,
  session: LeasedSession,
  tools: { offered: string[]; sent: string[] },
  events: PendingEvent[],
  provider: Provider | null,
  workspace: string,
  models: TurnModels,
  turnId: string,
): TurnCompaction | undefined {
  if (provider === null) return undefined;
  const { config, db, logger } = deps;
  return {
    deps: {
      config,
      db,
      logger,
      summariser: models.summariser ?? provider,
      contextTokens: models.contextTokens,
      buildPrompt: () => buildSessionPrompt(deps, session, tools.offered, events[0]?.userId ?? '', workspace, models.primaryRef),
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
 * Starts the turn (or resumes a crashed one): the tool policy and offer, a compression or a
 * /compress before it, the session's prompt on its first turn. Returns the turn's result instead
 * when a compression or a command answered the events.
 */
export async function setUpTurn(
  deps: TurnDependencies,
  lease: Lease,
  session: LeasedSession,
  events: PendingEvent[],
): Promise<{ setup: TurnSetup } | { done: TurnResult }> {
  const { db, logger } = deps;
  const eventIds = events.map((event) => event.id);
  const resumedTurnId = events.find((event) => event.turnId !== null)?.turnId ?? null;
  const turnId = resumedTurnId ?? randomUUID();
  const shape = await turnShapeOf(db, session, lease.sessionId);
  const role: CallerRole = shape.role ?? (session.platform === SCHEDULED_PLATFORM ? 'cron' : 'chat');
  const policy = parsePolicy(session.toolPolicy, logger, session.profileId);
  // A scheduled run gets its job's toolsets (still minus what no unattended run may have).
  const jobToolsets = shape.jobToolsets ?? (role === 'cron' && events[0] ? (await scheduledRunFor(db, events[0].id))?.toolsets : undefined);
  const plan = planToolOffer(deps.registry, shape.within(deps.exposure.resolve({ policy, platform: session.platform, role, jobToolsets })), deps.config.tools.toolSchemaBudget);
  const { offered, sent } = plan;
  const callerId = events[events.length - 1]?.userId ?? '';
  // The session's profile may have its own models: its turns, children and summaries use them.
  const models = await turnModels(deps, session.profileId);
  const provider = providerFor(shape, models.provider, models.childProvider);
  const workspace = sessionWorkspace(deps.config, session.profileId, shape.workspaceSessionId ?? lease.sessionId);
  const compaction = compactionFor(deps, lease, session, { offered, sent }, events, provider, workspace, models, turnId);
  const setup: TurnSetup = {
    turnId,
    eventIds,
    role,
    policy,
    jobToolsets,
    shape,
    provider,
    hooks: null,
    offered,
    sent,
    callerId,
    compaction,
    note: undefined,
    ineffective: undefined,
    history: undefined,
    workspace,
    attempts: 1,
  };
  if (resumedTurnId !== null) {
    if (lease.tookOver) recordCrashRecovery();
    setup.attempts = await resumeTurn(db, lease, turnId);
    return { setup };
  }
  if (compaction) {
    const before = await compactBeforeTurn(compaction, events);
    if (before.kind === 'compressed') return { done: { eventIds: before.answeredEventIds, outcome: 'compressed', childSessionId: before.childId } };
    if (before.kind === 'answered') return { done: { eventIds: before.eventIds, outcome: 'command' } };
    setup.note = before.note;
    setup.ineffective = before.ineffective;
    setup.history = before.history;
  }
  const newPrompt = session.systemPrompt === null ? await buildSessionPrompt(deps, session, offered, events[0]?.userId ?? '', workspace, models.primaryRef) : null;
  await startTurn(db, lease, turnId, eventIds, newPrompt);
  if (newPrompt !== null) session.systemPrompt = newPrompt;
  return { setup };
}
