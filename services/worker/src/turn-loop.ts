import { sessionWorkspace } from './session-prompt.ts';
import type { Transaction } from 'kysely';
import { runToolLoop } from '@herald/agent';
import type { ChatMessage, LoopProgress, LoopResult, ModelCallRecord, Provider, ToolRunner } from '@herald/agent';
import { StreamRelay, TurnStreamWriter } from '@herald/queue';
import { openDraft } from './turn-draft.ts';
import type { TurnDraft } from './turn-draft.ts';
import { PriceTable } from '@herald/core';
import { recordModelCost } from '@herald/telemetry';
import type { Logger } from '@herald/core';
import { appendMessages, checkBudgets, claimForTurn, fenced, limitPassed, pendingMessages, recordStep, takeAnsweredWaits, tokenLimitsArgument } from '@herald/session';
import type { Lease, LeasedSession, ModelCallRow } from '@herald/session';
import type { Database, Db, QueueMode } from '@herald/db';
import { TOOL_CALL, TOOL_SEARCH, ToolGate } from '@herald/tools';
import { modelTakesImages } from '@herald/attachments';
import type { WaitRequest } from '@herald/tools';
import { midTurnDue } from './turn-compaction.ts';
import { recordWithAudit, TurnHooks } from './turn-hooks.ts';
import type { GatedRunner } from './turn-hooks.ts';
import { subagentEvent } from './subagent-turn.ts';
import type { TurnSetup } from './turn-setup.ts';
import type { TurnControl, TurnDependencies } from './turn-runner.ts';

/** A model call as stored, priced from the deployment's price table (an unknown model costs 0, marked so). */
export function modelCallRow(call: ModelCallRecord | undefined, prices: PriceTable = BUILTIN_PRICES): ModelCallRow | null {
  if (!call) return null;
  const usage = call.result.usage;
  const cost = prices.costOf(call.provider, call.model, usage);
  recordModelCost(call.provider, call.model, cost.costUsd);
  return {
    provider: call.provider,
    model: call.model,
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cached_input_tokens: usage.cachedInputTokens,
    cache_write_tokens: usage.cacheWriteTokens,
    latency_ms: call.latencyMs,
    finish_reason: call.result.finishReason,
    key_name: call.result.keyName ?? null,
    cost_usd: cost.costUsd,
    price_known: cost.priceKnown,
  };
}

const BUILTIN_PRICES = new PriceTable();

/**
 * The money budgets before a model call, in one read: the person is warned once at 80% (what the
 * calls so far spent), and a spent budget stops the turn like the daily token limit does.
 */
async function budgetsBeforeCall(deps: TurnDependencies, sessionId: string, profileId: string, setup: TurnSetup) {
  return checkBudgets(deps.db, { userId: setup.callerId, profileId, sessionId, turnId: setup.turnId, budgets: deps.config.usage.budgets });
}

type FencedWrite = <T>(fn: (trx: Transaction<Database>) => Promise<T>) => Promise<T>;

/**
 * Steer and interrupt: messages that arrive mid-turn join it at the next model boundary. The
 * status flip is conditional, so a message either joins this turn or stays for the next one.
 */
function injectedMessages(db: Db, write: FencedWrite, sessionId: string, setup: TurnSetup): () => Promise<ChatMessage[]> {
  const { turnId, eventIds } = setup;
  return async () => {
    const pending = await pendingMessages(db, sessionId);
    if (pending.length === 0) return [];
    return write(async (trx) => {
      const claimed = await claimForTurn(trx, pending.map((event) => event.id), turnId);
      const ids = new Set(claimed.map((row) => row.id));
      const joined = pending.filter((event) => ids.has(event.id));
      await appendMessages(trx, sessionId, turnId, joined.map((event) => ({ role: 'user' as const, content: event.text, owner: event.user_id })));
      for (const event of joined) eventIds.push(event.id);
      return joined.map((event): ChatMessage => ({ role: 'user', content: event.text }));
    });
  };
}

/** The tools as this turn may run them: the gate (policy now, this caller), then the hooks. */
async function turnTools(deps: TurnDependencies, lease: Lease, session: LeasedSession, setup: TurnSetup, write: FencedWrite) {
  const { config, db, logger, registry } = deps;
  const { sessionId } = lease;
  const { turnId, role, callerId, offered } = setup;
  // Checked again per call: what this caller may run under the policy as it is now.
  const gate = new ToolGate({
    registry,
    offered,
    permitted: [
      ...setup.shape.within(deps.exposure.resolve({ policy: setup.policy, platform: session.platform, role, userId: callerId, jobToolsets: setup.jobToolsets })),
      // The search step itself is harmless: tool_call is checked again as the tool it names.
      ...offered.filter((name) => name === TOOL_SEARCH || name === TOOL_CALL),
    ],
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
    workspaceDir: sessionWorkspace(config, session.profileId, setup.shape.workspaceSessionId ?? sessionId),
    db,
    fencedWrite: write,
    offered,
    operator: config.people.operators.includes(callerId),
    mailDomains: config.platforms.mailAllowedDomains,
    modelTakesImages: setup.provider !== null && modelTakesImages(setup.provider.model, config.attachments.vision),
  };
  const turnHooks = await TurnHooks.open(deps.hooks, { ...baseContext, logger, write });
  setup.hooks = turnHooks;
  if (setup.shape.run) await turnHooks?.once('subagent_start', subagentEvent(setup.shape.run));
  const gated: GatedRunner = {
    definitions: registry.definitions(setup.sent),
    isReplaySafe: (name) => registry.get(name)?.replaySafe ?? false,
    execute: (call, toolSignal, approval) => gate.execute(call, { ...baseContext, signal: toolSignal }, approval),
    notStarted: () => write((trx) => takeAnsweredWaits(trx, turnId)),
  };
  const tools: ToolRunner<WaitRequest> = turnHooks?.tools(gated) ?? gated;
  return { turnHooks, tools };
}

/** The turn's progress into its events' streams (for SSE followers and chat edits), when streaming is on. */
function progressWriter(deps: TurnDependencies, setup: TurnSetup, logger: Logger): TurnStreamWriter | undefined {
  if (!deps.stream) return undefined;
  const { turnId } = setup;
  return new TurnStreamWriter(deps.stream, setup.eventIds, (error) => logger.warn({ err: error, turnId }, 'turn stream write failed; followers see the reply when it is committed'));
}

function onProgressOf(writer: TurnStreamWriter | undefined, draft: TurnDraft | undefined): ((event: LoopProgress) => void) | undefined {
  if (!writer && !draft) return undefined;
  const relay = new StreamRelay();
  let lastStep: number | undefined;
  return (event) => {
    writer?.write(event);
    if (!draft) return;
    const view = relay.take(event);
    if (!view) return;
    // Text of a later step (after a tool call) starts a new paragraph in the chat, as it reads in the transcript.
    if (event.type === 'delta') {
      if (lastStep !== undefined && event.step !== lastStep) draft.take({ type: 'delta', text: '\n\n' });
      lastStep = event.step;
    }
    draft.take(view);
  };
}

/** Runs the tool loop from a history, with or without the mid-turn compaction estimate. */
export type TurnLoop = (from: ChatMessage[], compact: boolean) => Promise<LoopResult<WaitRequest>>;

/** The tool loop of one turn, every step recorded under the lease. */
export async function turnLoop(
  deps: TurnDependencies,
  lease: Lease,
  session: LeasedSession,
  queueMode: QueueMode,
  setup: TurnSetup,
  control: TurnControl,
  provider: Provider,
  systemPrompt: string,
): Promise<TurnLoop> {
  const { config, db, logger } = deps;
  const { sessionId } = lease;
  const { turnId, compaction } = setup;
  const write: FencedWrite = (fn) => fenced(db, lease, fn);
  const { turnHooks, tools } = await turnTools(deps, lease, session, setup, write);
  const injects = queueMode === 'steer' || queueMode === 'interrupt';
  const pollInjected = injects ? injectedMessages(db, write, sessionId, setup) : undefined;
  const writer = progressWriter(deps, setup, logger);
  setup.draft ??= await openDraft(deps.drafts, logger, { sessionId, platform: session.platform, turnId, eventIds: setup.eventIds, child: setup.shape.child });
  const draft = setup.draft;
  const onProgress = onProgressOf(writer, draft);
  return async (from, compact) => {
    // The draft's last edit lands before the reply commits: its delivery edits the draft after it.
    const result = await runToolLoop<WaitRequest>({
      ...(onProgress ? { onProgress } : {}),
      provider: turnHooks?.provider(provider) ?? provider,
      ...(compact && compaction ? { compaction: { due: midTurnDue(compaction, systemPrompt) } } : {}),
      modelSignal: () => control.modelSignal(),
      // Tokens are checked before every model call, not only when a message arrives: a turn (or a
      // delegated child) stops once the person's daily budget is spent.
      beforeModelCall: async () => {
        await control.ensureLease();
        const passed =
          (await limitPassed(db, setup.callerId, tokenLimitsArgument(config.people.quotas))) ??
          (await budgetsBeforeCall(deps, sessionId, session.profileId, setup));
        return passed?.message.replace(/^Not taken: /, 'Stopped before the next model call: ');
      },
      sessionId,
      system: systemPrompt,
      tools,
      maxIterations: setup.shape.maxIterations ?? config.roles.worker.maxIterations,
      retry: {
        maxRetries: config.model.maxRetries,
        baseMs: config.model.retryBaseMs,
        onRetry: (error, attempt, delayMs) =>
          logger.warn({ sessionId, kind: error.kind, status: error.status, attempt, delayMs }, 'model call failed; retrying'),
      },
      signal: control.signal,
      history: from,
      hooks: {
        ...(pollInjected ? { pollInjected } : {}),
        onToolStep: (step, call) =>
          recordStep(db, lease, turnId, [{ role: 'assistant', content: step.content, toolCalls: step.tool_calls }], modelCallRow(call, deps.prices)),
        onToolResults: (results) =>
          recordWithAudit(turnHooks, db, (executor) =>
            recordStep(executor, lease, turnId, results.map((r) => ({ role: 'tool' as const, content: r.content, toolCallId: r.tool_call_id, toolName: r.name })), null),
          ),
      },
    }).finally(() => draft?.settle());
    // Followers must have every piece of text before the reply's commit tells them the turn is done.
    await writer?.flush();
    return result;
  };
}
