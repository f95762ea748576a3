import { waitNotice } from './wait-notice.ts';
import type { ProfileModels } from './profile-models.ts';
import type { Config, Logger, PriceTable } from '@herald/core';
import { toChatMessages, withRecall } from '@herald/agent';
import type { ChatMessage, LoopResult, ModelCallRecord, Provider, RecallProvider } from '@herald/agent';
import { finishTurn, ineffectiveCompressions, LeaseLostError, loadTranscript, suspendTurn, warnBudgets } from '@herald/session';
import { isConnectionError } from '@herald/db';
import { compactMidTurn } from './turn-compaction.ts';
import { MAX_INEFFECTIVE } from './compaction.ts';
import type { Db, QueueMode } from '@herald/db';
import type { FinishedTurn, Lease, LeasedSession, PendingEvent, TranscriptCache } from '@herald/session';
import { completionCounts } from './turn-completion.ts';
import type { ToolExposure, ToolRegistry, WaitRequest } from '@herald/tools';
import type { Hooks } from '@herald/hooks';
import { modelCallRow, turnLoop } from './turn-loop.ts';
import type { TurnLoop } from './turn-loop.ts';
import { setUpTurn } from './turn-setup.ts';
import type { TurnSetup } from './turn-setup.ts';
import { subagentEvent } from './subagent-turn.ts';
import type { TurnStreamStore } from '@herald/queue';
import type { AnswerDrafts } from './turn-draft.ts';
import { withSessionTools } from './session-tools.ts';
import { withAttachments } from './turn-attachments.ts';
import type { McpTools } from '@herald/mcp';

export const NO_MODEL_REPLY =
  'Herald is running, but no model is configured, so I cannot answer yet. Set HERALD_MODEL ' +
  '(for example openai/gpt-4.1-mini or anthropic/claude-sonnet-4-5) and the provider key ' +
  '(OPENAI_API_KEY or ANTHROPIC_API_KEY; OPENAI_BASE_URL for Ollama, vLLM or OpenRouter), then restart Herald.';

export const STOPPED_REPLY = 'Stopped. Send a new message when you are ready.';

export const INTERNAL_ERROR_REPLY =
  'Sorry, something went wrong on my side while answering. The error is logged; please try again.';

export interface TurnDependencies {
  config: Config;
  db: Db;
  provider: Provider | null;
  /** Writes compression summaries (HERALD_SUMMARY_MODEL); the main provider when not given. */
  summariser?: Provider | null | undefined;
  registry: ToolRegistry;
  /** Which tools a session is offered and each caller may run, from the profile's tool policy. */
  exposure: ToolExposure;
  logger: Logger;
  /** Per-turn recall, injected next to the user message; null when off. */
  recall: RecallProvider | null;
  /** Lifecycle hooks (docs/hooks.md); none when not given. */
  hooks?: Hooks | undefined;
  /** The model of delegate_task's children (HERALD_DELEGATION_MODEL); the main provider when not given. */
  childProvider?: Provider | null | undefined;
  /** Where running turns publish their progress for followers; nothing is streamed without it. */
  stream?: TurnStreamStore | undefined;
  /** Chats that see the answer grow while it is written (turn-draft.ts); none when not given. */
  drafts?: AnswerDrafts | undefined;
  /** MCP servers' tools (docs/tools.md#mcp-servers); none when no server is configured. */
  mcp?: McpTools | undefined;
  /** Profiles' own models (their main, summary and children's models); the ones above when a profile has none. */
  profileModels?: ProfileModels | undefined;
  /** What model calls cost (HERALD_PRICES_FILE, then the built-in table); the built-in table when not given. */
  prices?: PriceTable | undefined;
  /** This worker's parsed transcripts between turns; every turn reads them whole without it. */
  transcripts?: TranscriptCache | undefined;
}

export interface TurnResult {
  eventIds: string[];
  outcome: LoopResult['outcome'] | 'no_model' | 'attempts_exhausted' | 'stopped' | 'error' | 'compressed' | 'command';
  /** Outcome 'compressed': the session ended and this child carries on (with the open events). */
  childSessionId?: string;
  /** The session's inbox as the turn's last write read it (the lease released when it was empty). */
  next?: FinishedTurn;
  /** The finished turn, for its completion event (background review). */
  turn?: { turnId: string; sessionId: string; iterations: number; profileId: string; userId: string; platform: string; offered: string[] };
}

/** How the running turn is steered from outside: lease loss, shutdown, /stop and interrupts. */
export interface TurnControl {
  /** Aborts the turn: lease lost, shutdown deadline, or a person's /stop. */
  signal: AbortSignal;
  /** True when the abort came from /stop: the turn ends with a reply instead of being handed back. */
  stopRequested(): boolean;
  /** A fresh signal per model call, aborted when a message arrives in interrupt mode. */
  modelSignal(): AbortSignal;
  /** Confirms the lease is still ours when the last renewal is stale; throws LeaseLostError if not. */
  ensureLease(): Promise<void>;
  /** Turns this drain already compacted mid-turn: a second overflow of one turn is answered as an error. */
  compacted: Set<string>;
}

/** Known already when compactBeforeTurn read the session's size this turn; read once otherwise. */
async function compactionAllowed(db: Db, sessionId: string, ineffective: number | undefined): Promise<boolean> {
  if (ineffective !== undefined) return ineffective < MAX_INEFFECTIVE;
  return (await ineffectiveCompressions(db, sessionId)) < MAX_INEFFECTIVE;
}

type Finish = (text: string, outcome: TurnResult['outcome'], iterations: number, finalCall?: ModelCallRecord) => Promise<TurnResult>;

/** Ends the turn with its reply stored on the events (the compression notice appended). */
/** The 80% warning for what the turn's last call spent, after the reply; its failure never touches the reply. */
async function warnAfterTurn(deps: TurnDependencies, context: Parameters<typeof warnBudgets>[1]): Promise<void> {
  await warnBudgets(deps.db, context).catch((error: unknown) => deps.logger.warn({ err: error, sessionId: context.sessionId }, 'budget warning failed; the next model call tries again'));
}

function finisher(deps: TurnDependencies, lease: Lease, session: LeasedSession, events: PendingEvent[], setup: TurnSetup): Finish {
  const { turnId, eventIds } = setup;
  return async (text, outcome, iterations, finalCall) => {
    if (setup.shape.run) await setup.hooks?.once('subagent_stop', subagentEvent(setup.shape.run, outcome));
    const failed = outcome !== 'answered' && outcome !== 'iteration_limit' && outcome !== 'tool_errors';
    const userId = events[events.length - 1]?.userId ?? '';
    const turn = { turnId, sessionId: lease.sessionId, iterations, profileId: session.profileId, userId, platform: session.platform, offered: setup.sent };
    // No text, no outbox row to edit the draft into (a tool line was all it showed): take it back.
    if (text.trim() === '' && setup.note === undefined) await setup.draft?.discard();
    const next = await finishTurn(deps.db, lease, turnId, eventIds, {
      reply: setup.note === undefined ? text : `${text}\n\n${setup.note}`,
      failed,
      error: failed ? outcome : outcome === 'iteration_limit' ? setup.shape.iterationLimitError : null,
      iterations,
      modelCall: modelCallRow(finalCall, deps.prices),
      completion: completionCounts(outcome, turn),
    });
    await warnAfterTurn(deps, { userId: setup.callerId, profileId: session.profileId, sessionId: lease.sessionId, turnId, budgets: deps.config.usage.budgets });
    return { eventIds, outcome, turn, next };
  };
}

/** The stored transcript, with recalled snippets next to the user message when recall is on. */
async function turnHistory(
  deps: TurnDependencies,
  session: LeasedSession,
  sessionId: string,
  setup: TurnSetup,
  events: PendingEvent[],
): Promise<ChatMessage[]> {
  // herald_start_turn appended the events as user messages, in this order, after what was read.
  const stored = setup.history
    ? [...setup.history, ...events.map((event): ChatMessage => ({ role: 'user', content: event.text }))]
    : toChatMessages(await loadTranscript(deps.db, sessionId, deps.transcripts));
  const history = setup.provider === null ? stored : await withAttachments(deps, setup.workspace, setup.provider, events, stored);
  // A child of delegate_task works from its focused prompt only: no recall of the person's past.
  if (deps.recall === null || setup.shape.child) return history;
  const last = events[events.length - 1];
  const snippets = await deps.recall
    .recall({ profileId: session.profileId, userId: last?.userId ?? '', sessionId, text: events.map((e) => e.text).join('\n') })
    .catch((error: unknown) => {
      deps.logger.warn({ err: error, sessionId }, 'recall failed; answering without it');
      return [];
    });
  return withRecall(history, snippets);
}

/**
 * Runs one turn for the given open events under the lease: starts it (or resumes a crashed one),
 * runs the tool loop persisting each step, and ends it with the reply stored on the events. Every
 * write is one call of a turn function that checks the lease token first.
 */
export async function runTurn(
  deps: TurnDependencies,
  lease: Lease,
  session: LeasedSession,
  queueMode: QueueMode,
  events: PendingEvent[],
  control: TurnControl,
): Promise<TurnResult> {
  const { db, config, logger } = deps;
  const sessionId = lease.sessionId;
  deps = await withSessionTools(deps, lease, session);
  const started = await setUpTurn(deps, lease, session, events);
  if ('done' in started) return started.done;
  const { setup } = started;
  const { turnId, eventIds, attempts, compaction } = setup;
  const finish = finisher(deps, lease, session, events, setup);

  if (attempts > config.roles.worker.turnMaxAttempts) {
    logger.warn({ sessionId, turnId, attempts }, 'turn attempt budget spent');
    return finish(`Sorry, I could not finish this: the turn was interrupted ${attempts - 1} times. Please send it again.`, 'attempts_exhausted', 0);
  }
  const provider = setup.provider;
  if (provider === null) return finish(NO_MODEL_REPLY, 'no_model', 0);
  const systemPrompt = session.systemPrompt;
  if (systemPrompt === null) throw new Error(`session ${sessionId} has a turn but no system prompt`);

  const history = await turnHistory(deps, session, sessionId, setup, events);
  const loop = await turnLoop(deps, lease, session, queueMode, setup, control, provider, systemPrompt);
  // Compaction mid-turn: once per turn, and not once compressing stopped helping (anti-thrash).
  const mayCompact = compaction !== undefined && !control.compacted.has(turnId) && (await compactionAllowed(db, sessionId, setup.ineffective));
  const ran = await runLoop(deps, sessionId, setup, control, loop, history, mayCompact);
  // Compressed: the answer comes from the child session's turn; its draft starts there.
  if ('done' in ran) return (await setup.draft?.discard(), ran.done);
  if ('error' in ran) return finish(...ran.error);
  const result = ran.result;
  if (result.outcome === 'waiting' && result.wait) {
    // Parked: nothing holds the worker or the lease while the person decides; an answer, /approve,
    // /deny or the timeout makes the turn runnable and any worker resumes it.
    const { request, notStarted } = result.wait;
    // The question goes out next; the answer is drafted anew below it when the turn resumes.
    await setup.draft?.discard();
    await suspendTurn(db, lease, turnId, { ...request, notStarted }, waitNotice(request));
    logger.info({ sessionId, turnId, kind: request.kind, tool: request.toolName }, 'turn waiting for the person');
    return { eventIds, outcome: 'waiting' };
  }
  if (result.outcome === 'provider_error') logger.error({ sessionId, turnId }, 'model call failed after retries');
  if (result.outcome === 'tool_errors') logger.warn({ sessionId, turnId }, 'turn ended after repeated invalid tool calls');
  return finish(result.text, result.outcome, result.iterations, result.finalCall);
}

type LoopOutcome =
  | { result: LoopResult<WaitRequest> }
  | { done: TurnResult }
  /** Answered with a reply instead (/stop, our own failure). */
  | { error: [text: string, outcome: TurnResult['outcome'], iterations: number] };

/** The loop, and a compression when the context filled up; lease loss and shutdown propagate. */
async function runLoop(
  deps: TurnDependencies,
  sessionId: string,
  setup: TurnSetup,
  control: TurnControl,
  loop: TurnLoop,
  history: ChatMessage[],
  mayCompact: boolean,
): Promise<LoopOutcome> {
  const { turnId, eventIds, compaction } = setup;
  try {
    let result = await loop(history, mayCompact);
    if (result.outcome === 'context_full' && compaction) {
      const outcome = await compactMidTurn(compaction, result.overflow === true);
      if (outcome.kind === 'compressed') {
        control.compacted.add(turnId);
        return { done: { eventIds, outcome: 'compressed', childSessionId: outcome.childId } };
      }
      // Not compressed (summariser unreachable, nothing to compact): go on from what is stored;
      // a prompt the provider refuses is then answered as the error it is.
      setup.note = outcome.notice ?? setup.note;
      result = await loop(toChatMessages(await loadTranscript(deps.db, sessionId, deps.transcripts)), false);
    }
    return { result };
  } catch (error) {
    if (LeaseLostError.isInstance(error)) throw error;
    if (control.stopRequested()) return { error: [STOPPED_REPLY, 'stopped', 0] };
    if (control.signal.aborted || isConnectionError(error)) throw error;
    // Our own failure (a bug, a tool that threw): answer instead of retrying the same crash forever.
    deps.logger.error({ err: error, sessionId, turnId }, 'turn failed');
    return { error: [INTERNAL_ERROR_REPLY, 'error', 0] };
  }
}
