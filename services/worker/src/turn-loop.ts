import type { Transaction } from 'kysely';
import { modelCallRow, runToolLoop } from '@herald/agent';
import type { ChatMessage, LoopOptions, LoopProgress, LoopResult, Provider, ToolRunner } from '@herald/agent';
import { StreamRelay } from '@herald/queue';
import type { TurnStreamWriter } from '@herald/queue';
import { openDraft } from './turn-draft.ts';
import type { TurnDraft } from './turn-draft.ts';
import { platformAccountNames } from '@herald/core';
import { claimForTurn, pendingMessages } from '@herald/session';
import { recordResults, recordStep } from '@herald/inbox';
import { takeAnsweredWaits } from '@herald/waits';
import { checkBudgets, limitPassed, tokenLimitsArgument } from '@herald/limits';
import { fenced } from '@herald/leases';
import { appendMessages } from '@herald/transcript';
import type { Database, Db } from '@herald/db';
import { TOOL_CALL, TOOL_SEARCH, ToolGate } from '@herald/tools';
import { modelTakesImages } from '@herald/attachments';
import type { WaitRequest } from '@herald/tools';
import { midTurnDue } from './turn-compaction.ts';
import { compressionShown, progressWriter } from './turn-progress.ts';
import type { CompressionShown } from './turn-progress.ts';
import { TurnHooks } from './turn-hooks.ts';
import type { GatedRunner } from './turn-hooks.ts';
import { subagentEvent } from './subagent-turn.ts';
import type { OpenedTurn, TurnContext } from './turn-context.ts';

/**
 * The money budgets before a model call, in one read: the person is warned once at 80% (what the
 * calls so far spent), and a spent budget stops the turn like the daily token limit does.
 */
async function budgetsBeforeCall(turn: TurnContext) {
  const { deps, lease, session, callerId, turnId } = turn;
  return checkBudgets(deps.db, { userId: callerId, profileId: session.profileId, sessionId: lease.sessionId, turnId, budgets: deps.config.usage.budgets, profiles: deps.profiles });
}

type FencedWrite = <T>(fn: (trx: Transaction<Database>) => Promise<T>) => Promise<T>;

/**
 * Steer and interrupt: messages that arrive mid-turn join it at the next model boundary. The
 * status flip is conditional, so a message either joins this turn or stays for the next one.
 * `eventIds` is the open loop's own list of the turn's events; this is the one place it grows.
 */
function injectedMessages(db: Db, write: FencedWrite, sessionId: string, turnId: string, eventIds: string[]): () => Promise<ChatMessage[]> {
  return async () => {
    const pending = await pendingMessages(db, sessionId);
    if (pending.length === 0) return [];
    return write(async (trx) => {
      const claimed = await claimForTurn(
        trx,
        pending.map((event) => event.id),
        turnId,
      );
      const ids = new Set(claimed.map((row) => row.id));
      const joined = pending.filter((event) => ids.has(event.id));
      await appendMessages(
        trx,
        sessionId,
        turnId,
        joined.map((event) => ({ role: 'user' as const, content: event.text, owner: event.user_id })),
      );
      for (const event of joined) eventIds.push(event.id);
      return joined.map((event): ChatMessage => ({ role: 'user', content: event.text }));
    });
  };
}

/** The tools as this turn may run them: the gate (policy now, this caller), then the hooks, which open here. */
async function turnTools(turn: TurnContext, provider: Provider, write: FencedWrite) {
  const { deps, lease, session, shape, turnId, callerId, offered } = turn;
  const { config, db, logger, registry } = deps;
  const { sessionId } = lease;
  const { role } = shape;
  // Checked again per call: what this caller may run under the policy as it is now.
  const gate = new ToolGate({
    registry,
    offered,
    permitted: [
      ...shape.permitted(callerId),
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
    workspaceDir: shape.workspace,
    db,
    fencedWrite: write,
    offered,
    operator: config.people.operators.includes(callerId),
    mailDomains: config.platforms.mailAllowedDomains,
    platformAccounts: platformAccountNames(config.platforms),
    modelTakesImages: modelTakesImages(provider.model, config.attachments.vision),
  };
  const hooks = await TurnHooks.open(deps.hooks, { ...baseContext, logger, write });
  if (shape.run) await hooks?.once('subagent_start', subagentEvent(shape.run));
  const gated: GatedRunner = {
    definitions: registry.definitions(turn.sent),
    isReplaySafe: (name) => registry.get(name)?.replaySafe ?? false,
    execute: (call, toolSignal, approval) => gate.execute(call, { ...baseContext, signal: toolSignal }, approval),
    notStarted: () => write((trx) => takeAnsweredWaits(trx, turnId)),
  };
  const tools: ToolRunner<WaitRequest> = hooks?.tools(gated) ?? gated;
  return { hooks, tools };
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

/** The model a turn calls and the prompt it sends, once set up found both. */
export interface TurnModel {
  provider: Provider;
  systemPrompt: string;
}

/** Runs the tool loop from a history, with or without the mid-turn compaction estimate. */
export type TurnLoop = (from: ChatMessage[], compact: boolean) => Promise<LoopResult<WaitRequest>>;

/** The opened loop: call it to run the model and the tools; the end of the turn reads the rest. */
export interface OpenLoop extends OpenedTurn {
  run: TurnLoop;
  /** Shows a compression in the middle of the turn to its followers and its chat. */
  compression: CompressionShown;
}

/** What every run of the loop is given: the model, the tools, and the hooks that record each step under the lease. */
function loopOptions(
  turn: TurnContext,
  model: TurnModel,
  opened: { hooks: TurnHooks | null; tools: ToolRunner<WaitRequest> },
  pollInjected: (() => Promise<ChatMessage[]>) | undefined,
): Omit<LoopOptions<WaitRequest>, 'history'> {
  const { deps, lease, control, turnId } = turn;
  const { config, db, logger } = deps;
  const { sessionId } = lease;
  const { hooks } = opened;
  return {
    provider: hooks?.provider(model.provider) ?? model.provider,
    modelSignal: () => control.modelSignal(),
    // Tokens are checked before every model call, not only when a message arrives: a turn (or a
    // delegated child) stops once the person's daily budget is spent.
    beforeModelCall: async () => {
      await control.ensureLease();
      const passed = (await limitPassed(db, turn.callerId, tokenLimitsArgument(config.people.quotas))) ?? (await budgetsBeforeCall(turn));
      return passed?.message.replace(/^Not taken: /, 'Stopped before the next model call: ');
    },
    sessionId,
    system: model.systemPrompt,
    tools: opened.tools,
    maxIterations: turn.shape.maxIterations,
    retry: {
      maxRetries: config.model.maxRetries,
      baseMs: config.model.retryBaseMs,
      onRetry: (error, attempt, delayMs) => logger.warn({ sessionId, kind: error.kind, status: error.status, attempt, delayMs }, 'model call failed; retrying'),
    },
    signal: control.signal,
    hooks: {
      ...(pollInjected ? { pollInjected } : {}),
      onToolStep: (step, call) => recordStep(db, lease, turnId, [{ role: 'assistant', content: step.content, toolCalls: step.tool_calls }], modelCallRow(call, deps.prices)),
      onToolResults: (results) =>
        recordResults(
          db,
          lease,
          turnId,
          results.map((r) => ({ role: 'tool' as const, content: r.content, toolCallId: r.tool_call_id, toolName: r.name })),
          hooks?.takeAudit() ?? [],
        ),
    },
  };
}

/**
 * Opens the turn's tool loop: its tools and hooks (subagent_start fires here), the poll for
 * steered messages, its progress stream and its chat draft. The loop it returns calls the model and
 * runs the tools, every step recorded under the lease.
 */
export async function openLoop(turn: TurnContext, model: TurnModel): Promise<OpenLoop> {
  const { deps, lease, session, turnId } = turn;
  const { db, logger } = deps;
  const { sessionId } = lease;
  const write: FencedWrite = (fn) => fenced(db, lease, fn);
  const eventIds = [...turn.eventIds];
  const { hooks, tools } = await turnTools(turn, model.provider, write);
  const injects = turn.queueMode === 'steer' || turn.queueMode === 'interrupt';
  const pollInjected = injects ? injectedMessages(db, write, sessionId, turnId, eventIds) : undefined;
  const writer = progressWriter(deps, turnId, eventIds);
  const draft = turn.shape.drafted ? await openDraft(deps.drafts, logger, { sessionId, platform: session.platform, turnId, eventIds }) : undefined;
  const onProgress = onProgressOf(writer, draft);
  const options = loopOptions(turn, model, { hooks, tools }, pollInjected);
  const { compaction } = turn;
  const run: TurnLoop = async (from, compact) => {
    // The draft's last edit lands before the reply commits: its delivery edits the draft after it.
    const result = await runToolLoop<WaitRequest>({
      ...(onProgress ? { onProgress } : {}),
      ...options,
      ...(compact && compaction ? { compaction: { due: midTurnDue(compaction, model.systemPrompt) } } : {}),
      history: from,
    }).finally(() => draft?.settle());
    // Followers must have every piece of text before the reply's commit tells them the turn is done.
    await writer?.flush();
    return result;
  };
  return { hooks, draft, eventIds, run, compression: compressionShown(writer, draft) };
}
