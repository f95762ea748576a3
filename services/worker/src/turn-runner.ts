import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { waitNotice } from './wait-notice.ts';
import type { Transaction } from 'kysely';
import type { Config, Logger } from '@herald/core';
import { runToolLoop, toChatMessages, withRecall } from '@herald/agent';
import type { ChatMessage, LoopResult, ModelCallRecord, Provider, RecallProvider, ToolRunner } from '@herald/agent';
import { appendMessages, fenced, finishTurn, LeaseLostError, loadTranscript, recordStep, resumeTurn, startTurn, suspendTurn, takeAnsweredWaits } from '@herald/session';
import { isConnectionError } from '@herald/db';
import { buildSessionPrompt } from './session-prompt.ts';
import { compactBeforeTurn, compactMidTurn, midTurnDue } from './turn-compaction.ts';
import type { TurnCompaction } from './turn-compaction.ts';
import { MAX_INEFFECTIVE } from './compaction.ts';
import { scheduledRunFor, SCHEDULED_PLATFORM } from '@herald/cron';
import type { Database, Db, QueueMode } from '@herald/db';
import type { Lease, LeasedSession, ModelCallRow, PendingEvent } from '@herald/session';
import { toolPolicySchema, ToolGate } from '@herald/tools';
import { recordCrashRecovery } from '@herald/telemetry';
import type { CallerRole, ToolExposure, ToolPolicy, ToolRegistry, WaitRequest } from '@herald/tools';
import type { Hooks } from '@herald/hooks';
import { recordWithAudit, TurnHooks } from './turn-hooks.ts';
import { providerFor, subagentEvent, turnShapeOf } from './subagent-turn.ts';
import type { GatedRunner } from './turn-hooks.ts';

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
}

export interface TurnResult {
  eventIds: string[];
  outcome: LoopResult['outcome'] | 'no_model' | 'attempts_exhausted' | 'stopped' | 'error' | 'compressed' | 'command';
  /** Outcome 'compressed': the session ended and this child carries on (with the open events). */
  childSessionId?: string;
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

function parsePolicy(stored: Record<string, unknown>, logger: Logger, profileId: string): ToolPolicy {
  const parsed = toolPolicySchema.safeParse(stored);
  if (parsed.success) return parsed.data;
  // The API validates policies on write; a hand-edited bad one must not widen anything.
  logger.error({ profileId, issues: parsed.error.issues }, 'stored tool policy is invalid; offering the safe toolset only');
  return { enabled: ['safe'] };
}

function modelCallRow(call: ModelCallRecord | undefined): ModelCallRow | null {
  if (!call) return null;
  const usage = call.result.usage;
  return {
    provider: call.provider,
    model: call.model,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cached_input_tokens: usage.cachedInputTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    latency_ms: call.latencyMs,
    finish_reason: call.result.finishReason,
  };
}

async function compactionAllowed(db: Db, sessionId: string): Promise<boolean> {
  const row = await db.selectFrom('sessions').select('ineffective_compressions').where('id', '=', sessionId).executeTakeFirstOrThrow();
  return row.ineffective_compressions < MAX_INEFFECTIVE;
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
  const signal = control.signal;
  const sessionId = lease.sessionId;
  const eventIds = events.map((event) => event.id);
  const resumedTurnId = events.find((event) => event.turnId !== null)?.turnId ?? null;
  const turnId = resumedTurnId ?? randomUUID();

  // A child of delegate_task: its own role, tools, budget, model and workspace (subagent-turn.ts).
  const shape = await turnShapeOf(db, session, sessionId);
  const role: CallerRole = shape.role ?? (session.platform === SCHEDULED_PLATFORM ? 'cron' : 'chat');
  const policy = parsePolicy(session.toolPolicy, logger, session.profileId);
  // A scheduled run gets its job's toolsets (still minus what no unattended run may have).
  const jobToolsets = shape.jobToolsets ?? (role === 'cron' && events[0] ? (await scheduledRunFor(db, events[0].id))?.toolsets : undefined);
  // Offered to the model: the session-wide set, so every person in a chat sees the same prefix.
  const offered = shape.within(deps.exposure.resolve({ policy, platform: session.platform, role, jobToolsets }));
  const callerId = events[events.length - 1]?.userId ?? '';

  const provider = providerFor(shape, deps.provider, deps.childProvider);
  const compaction: TurnCompaction | undefined =
    provider === null
      ? undefined
      : {
          deps: {
            config,
            db,
            logger,
            summariser: deps.summariser ?? provider,
            buildPrompt: () => buildSessionPrompt(deps, session, offered, events[0]?.userId ?? ''),
            tools: deps.registry.definitions(offered),
          },
          lease,
          model: provider.model,
          systemPrompt: session.systemPrompt,
        };
  let note: string | undefined;
  let attempts = 1;
  if (resumedTurnId !== null) {
    if (lease.tookOver) recordCrashRecovery();
    attempts = await resumeTurn(db, lease, turnId);
  } else {
    if (compaction) {
      const before = await compactBeforeTurn(compaction, events);
      if (before.kind === 'compressed') return { eventIds: before.answeredEventIds, outcome: 'compressed', childSessionId: before.childId };
      if (before.kind === 'answered') return { eventIds: before.eventIds, outcome: 'command' };
      note = before.note;
    }
    const newPrompt = session.systemPrompt === null ? await buildSessionPrompt(deps, session, offered, events[0]?.userId ?? '') : null;
    await startTurn(db, lease, turnId, eventIds, newPrompt);
    if (newPrompt !== null) session.systemPrompt = newPrompt;
  }

  let hooksOfTurn: TurnHooks | null = null;
  const finish = async (text: string, outcome: TurnResult['outcome'], iterations: number, finalCall?: ModelCallRecord) => {
    if (shape.run) await hooksOfTurn?.once('subagent_stop', subagentEvent(shape.run, outcome));
    const failed = outcome !== 'answered' && outcome !== 'iteration_limit' && outcome !== 'tool_errors';
    await finishTurn(db, lease, turnId, eventIds, {
      reply: note === undefined ? text : `${text}\n\n${note}`,
      failed,
      error: failed ? outcome : outcome === 'iteration_limit' ? shape.iterationLimitError : null,
      iterations,
      modelCall: modelCallRow(finalCall),
    });
    const userId = events[events.length - 1]?.userId ?? '';
    return { eventIds, outcome, turn: { turnId, sessionId, iterations, profileId: session.profileId, userId, platform: session.platform, offered } };
  };

  if (attempts > config.roles.worker.turnMaxAttempts) {
    logger.warn({ sessionId, turnId, attempts }, 'turn attempt budget spent');
    return finish(
      `Sorry, I could not finish this: the turn was interrupted ${attempts - 1} times. Please send it again.`,
      'attempts_exhausted',
      0,
    );
  }
  if (provider === null) return finish(NO_MODEL_REPLY, 'no_model', 0);
  const systemPrompt = session.systemPrompt;
  if (systemPrompt === null) throw new Error(`session ${sessionId} has a turn but no system prompt`);

  let history = toChatMessages(await loadTranscript(db, sessionId));
  if (deps.recall !== null && !shape.child) {
    const last = events[events.length - 1];
    const snippets = await deps.recall
      .recall({ profileId: session.profileId, userId: last?.userId ?? '', sessionId, text: events.map((e) => e.text).join('\n') })
      .catch((error: unknown) => {
        logger.warn({ err: error, sessionId }, 'recall failed; answering without it');
        return [];
      });
    history = withRecall(history, snippets);
  }
  const registry = deps.registry;
  const write = <T>(fn: (trx: Transaction<Database>) => Promise<T>) => fenced(db, lease, fn);
  // Checked again per call: what this caller may run under the policy as it is now.
  const gate = new ToolGate({
    registry,
    offered,
    permitted: shape.within(deps.exposure.resolve({ policy, platform: session.platform, role, userId: callerId, jobToolsets })),
    approvalTimeoutMs: config.tools.approvalTimeoutMs,
    onRefusal: ({ tool, reason }) => logger.warn({ sessionId, turnId, tool, role, userId: callerId, reason }, 'tool call refused'),
  });
  const baseContext = {
    sessionId,
    turnId,
    profileId: session.profileId,
    userId: callerId,
    platform: session.platform,
    role,
    workspaceDir: join(config.tools.workspaceRoot, session.profileId, shape.workspaceSessionId ?? sessionId),
    db,
    fencedWrite: write,
    offered,
  };
  const turnHooks = await TurnHooks.open(deps.hooks, { ...baseContext, logger, write });
  hooksOfTurn = turnHooks;
  if (shape.run) await turnHooks?.once('subagent_start', subagentEvent(shape.run));
  const gated: GatedRunner = {
    definitions: registry.definitions(offered),
    isReplaySafe: (name) => registry.get(name)?.replaySafe ?? false,
    execute: (call, toolSignal, approval) => gate.execute(call, { ...baseContext, signal: toolSignal }, approval),
    notStarted: () => write((trx) => takeAnsweredWaits(trx, turnId)),
  };
  // Steer and interrupt: messages that arrive mid-turn join it at the next model boundary. The
  // status flip is conditional, so a message either joins this turn or stays for the next one.
  const pollInjected = async (): Promise<ChatMessage[]> => {
    const pending = await db
      .selectFrom('inbound_events')
      .select(['id', 'text'])
      .where('session_id', '=', sessionId)
      .where('status', '=', 'pending')
      .where('kind', '=', 'message')
      .orderBy('received_at')
      .orderBy('id')
      .execute();
    if (pending.length === 0) return [];
    return write(async (trx) => {
      const claimed = await trx
        .updateTable('inbound_events')
        .set({ status: 'processing', turn_id: turnId })
        .where('id', 'in', pending.map((event) => event.id))
        .where('status', '=', 'pending')
        .returning('id')
        .execute();
      const ids = new Set(claimed.map((row) => row.id));
      const joined = pending.filter((event) => ids.has(event.id));
      await appendMessages(trx, sessionId, turnId, joined.map((event) => ({ role: 'user' as const, content: event.text })));
      for (const event of joined) eventIds.push(event.id);
      return joined.map((event): ChatMessage => ({ role: 'user', content: event.text }));
    });
  };
  const injects = queueMode === 'steer' || queueMode === 'interrupt';
  const tools: ToolRunner<WaitRequest> = turnHooks?.tools(gated) ?? gated;

  // Compaction mid-turn: once per turn, and not once compressing stopped helping (anti-thrash).
  const mayCompact = compaction !== undefined && !control.compacted.has(turnId) && (await compactionAllowed(db, sessionId));
  const loop = (from: ChatMessage[], compact: boolean) =>
    runToolLoop<WaitRequest>({
      provider: turnHooks?.provider(provider) ?? provider,
      ...(compact && compaction ? { compaction: { due: midTurnDue(compaction, systemPrompt) } } : {}),
      modelSignal: () => control.modelSignal(),
      beforeModelCall: () => control.ensureLease(),
      sessionId,
      system: systemPrompt,
      tools,
      maxIterations: shape.maxIterations ?? config.roles.worker.maxIterations,
      retry: {
        maxRetries: config.model.maxRetries,
        baseMs: config.model.retryBaseMs,
        onRetry: (error, attempt, delayMs) =>
          logger.warn({ sessionId, kind: error.kind, status: error.status, attempt, delayMs }, 'model call failed; retrying'),
      },
      signal,
      history: from,
      hooks: {
        ...(injects ? { pollInjected } : {}),
        onToolStep: (step, call) =>
          recordStep(db, lease, turnId, [{ role: 'assistant', content: step.content, toolCalls: step.tool_calls }], modelCallRow(call)),
        onToolResults: (results) =>
          recordWithAudit(turnHooks, db, (executor) => recordStep(
            executor,
            lease,
            turnId,
            results.map((r) => ({ role: 'tool' as const, content: r.content, toolCallId: r.tool_call_id, toolName: r.name })),
            null,
          )),
      },
    });
  let result: LoopResult<WaitRequest>;
  try {
    result = await loop(history, mayCompact);
    if (result.outcome === 'context_full' && compaction) {
      const outcome = await compactMidTurn(compaction, result.overflow === true);
      if (outcome.kind === 'compressed') {
        control.compacted.add(turnId);
        return { eventIds, outcome: 'compressed', childSessionId: outcome.childId };
      }
      // Not compressed (summariser unreachable, nothing to compact): go on from what is stored;
      // a prompt the provider refuses is then answered as the error it is.
      note = outcome.notice ?? note;
      result = await loop(toChatMessages(await loadTranscript(db, sessionId)), false);
    }
  } catch (error) {
    if (LeaseLostError.isInstance(error)) throw error;
    if (control.stopRequested()) return finish(STOPPED_REPLY, 'stopped', 0);
    if (signal.aborted || isConnectionError(error)) throw error;
    // Our own failure (a bug, a tool that threw): answer instead of retrying the same crash forever.
    logger.error({ err: error, sessionId, turnId }, 'turn failed');
    return finish(INTERNAL_ERROR_REPLY, 'error', 0);
  }
  if (result.outcome === 'waiting' && result.wait) {
    // Parked: nothing holds the worker or the lease while the person decides; an answer, /approve,
    // /deny or the timeout makes the turn runnable and any worker resumes it.
    const { request, notStarted } = result.wait;
    await suspendTurn(db, lease, turnId, { ...request, notStarted }, waitNotice(request));
    logger.info({ sessionId, turnId, kind: request.kind, tool: request.toolName }, 'turn waiting for the person');
    return { eventIds, outcome: 'waiting' };
  }
  if (result.outcome === 'provider_error') logger.error({ sessionId, turnId }, 'model call failed after retries');
  if (result.outcome === 'tool_errors') logger.warn({ sessionId, turnId }, 'turn ended after repeated invalid tool calls');
  return finish(result.text, result.outcome, result.iterations, result.finalCall);
}
