import type { Config, Logger, PriceTable } from '@herald/core';
import { compactTranscript, contextWindowFor, estimateRequestTokens, estimateTokens, modelCallRow, thresholdTokens, toChatMessages } from '@herald/agent';
import type { ChatMessage, ModelCallRecord, Provider, ToolDefinition } from '@herald/agent';
import { recordModelCall } from '@herald/inbox';
import { claimCompression, commitCompaction, recordCompressionUnchanged, takeNotice } from '@herald/lineage';
import { loadTranscript } from '@herald/transcript';
import type { Lease } from '@herald/leases';
import type { NewMessage, TranscriptCache, TranscriptState } from '@herald/transcript';
import type { CompressionTrigger, Db } from '@herald/db';
import { recordCompression } from '@herald/telemetry';

// The worker's side of long conversations (docs/long-chats.md): when a session is compressed, and
// the compression itself, under the session lease. The algorithm is compactTranscript (libs/agent);
// the lineage commit is commitCompaction (libs/session).

export const UNAVAILABLE_NOTICE =
  'Note: this conversation is getting long, and I could not reach the summary model to compress it. ' + 'It goes on as it is for now; if answers start failing, send /compress or /new.';
export const THRASHING_NOTICE = 'Note: this conversation is too long to compress any further. Send /new to start a fresh session ' + '(earlier sessions stay searchable).';
/** Compressions in a row that do not bring a session under the threshold before it stops trying (Hermes). */
export const MAX_INEFFECTIVE = 2;
const SUMMARISER_SYSTEM = 'You write compact, faithful summaries of conversations for an assistant to continue from.';

export interface CompactionDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** The summary model (HERALD_SUMMARY_MODEL, else the main model). */
  summariser: Provider;
  /** The session's profile's `context_tokens`: overrides the window of HERALD_CONTEXT_TOKENS and the model's. */
  contextTokens?: number | undefined;
  /** Builds the child's system prompt fresh (memory written since the parent's is in it). */
  buildPrompt(): Promise<string>;
  tools: ToolDefinition[];
  /** The worker's parsed transcripts between turns (TurnDependencies.transcripts). */
  transcripts?: TranscriptCache | undefined;
  /** What the summary calls cost (TurnDependencies.prices); the built-in table when not given. */
  prices?: PriceTable | undefined;
}

export interface ContextBudget {
  window: number;
  threshold: number;
}

export function contextBudget(config: Config, model: string, contextTokens?: number): ContextBudget {
  const window = contextWindowFor(model, contextTokens ?? config.compression.contextTokens);
  return { window, threshold: thresholdTokens(window, config.compression.threshold) };
}

export interface SessionSize {
  /** max(the estimate of the next request, the last reported prompt + the new messages). */
  tokens: number;
  messages: number;
  ineffective: number;
  firstCompaction: boolean;
}

/** How big the next request of a session will be, before it is made (from loadTranscriptState). */
export function sessionSize(state: TranscriptState, system: string, history: ChatMessage[], incoming: string[], tools: ToolDefinition[]): SessionSize {
  const added = incoming.reduce((sum, text) => sum + 4 + estimateTokens(text), 0);
  const reported = state.lastInputTokens === null ? 0 : state.lastInputTokens + added;
  const estimate = estimateRequestTokens(system, history, tools) + added;
  return {
    tokens: Math.max(estimate, reported),
    messages: history.length + incoming.length,
    ineffective: state.ineffectiveCompressions,
    firstCompaction: state.parentSessionId === null,
  };
}

/** The automatic trigger a session's size fires, if any; none once compression stopped helping. */
export function autoTrigger(config: Config, budget: ContextBudget, size: SessionSize): CompressionTrigger | undefined {
  if (size.ineffective >= MAX_INEFFECTIVE) return undefined;
  if (size.tokens >= budget.threshold) return 'estimate';
  if (size.messages >= config.compression.messageLimit) return 'messages';
  return undefined;
}

export type CompactionOutcome =
  { kind: 'compressed'; childId: string; summarised: number; fallback: boolean; tokensBefore: number; tokensAfter: number } | { kind: 'unchanged'; reason: string; notice: string | undefined };

function toNewMessage(message: ChatMessage): NewMessage {
  if (message.role === 'tool') return { role: 'tool', content: message.content, toolCallId: message.tool_call_id, toolName: message.name };
  if (message.role === 'assistant') return { role: 'assistant', content: message.content, toolCalls: message.tool_calls };
  return { role: 'user', content: message.content };
}

export interface CompressRequest {
  trigger: CompressionTrigger;
  focus?: string | undefined;
  firstCompaction: boolean;
  /** A /compress command: answered in the commit, with this text. */
  answer?: { eventId: string; text: (summarised: number) => string } | undefined;
  /**
   * Whom the summary calls count for: the turn they interrupted (its person, as its own calls), or
   * before a turn started, the person whose message it is to answer (SideModelCall).
   */
  spentFor: { turnId: string } | { turnId: null; userId: string };
}

/**
 * A summary call, priced and counted like a turn's (kind 'compression', on the session it
 * compresses); stored before the commit, since it was spent whether or not the compression is
 * kept. Its input is the summary prompt, not the session's size: readers of that take turn calls.
 */
async function recordSummaryCall(deps: CompactionDeps, sessionId: string, spentFor: CompressRequest['spentFor'], call: ModelCallRecord): Promise<void> {
  const row = modelCallRow(call, deps.prices);
  if (row === null) return;
  await recordModelCall(deps.db, { kind: 'compression', sessionId, ...spentFor, call: row });
}

/** The summariser as compactTranscript calls it: each answer kept in `calls`, its wall time added to `summary.ms`. */
function summariserFor(deps: CompactionDeps, sessionId: string, calls: ModelCallRecord[], summary: { ms: number }): (prompt: string) => Promise<string> {
  return async (prompt) => {
    const started = performance.now();
    try {
      const answer = await deps.summariser.complete({
        sessionId: `${sessionId}:summary`,
        system: SUMMARISER_SYSTEM,
        messages: [{ role: 'user', content: prompt }],
        tools: [],
      });
      calls.push({ provider: answer.provider ?? deps.summariser.name, model: answer.model, latencyMs: Math.round(performance.now() - started), result: answer });
      return answer.content;
    } finally {
      summary.ms += performance.now() - started;
    }
  };
}

/**
 * Compresses the leased session into a child: claim, summarise, commit. Nothing of the session is
 * written but the claim until the commit, so a worker killed on the way leaves the session as it
 * was; the summary calls are stored before it, spent whether or not the compression is kept.
 */
export async function compressSession(deps: CompactionDeps, lease: Lease, model: string, request: CompressRequest): Promise<CompactionOutcome> {
  const { config, db, logger } = deps;
  const started = performance.now();
  if (!(await claimCompression(db, lease, request.trigger))) {
    return { kind: 'unchanged', reason: 'the session is being compressed elsewhere or has ended', notice: undefined };
  }
  const budget = contextBudget(config, model, deps.contextTokens);
  const messages = toChatMessages(await loadTranscript(db, lease.sessionId));
  const summary = { ms: 0 };
  // Stored once the summariser is done: a failure to store one is not the summariser's failure.
  const calls: ModelCallRecord[] = [];
  const result = await compactTranscript({
    messages,
    thresholdTokens: budget.threshold,
    contextTokens: budget.window,
    firstCompaction: request.firstCompaction,
    focus: request.focus,
    onFailure: config.compression.onFailure,
    summarise: summariserFor(deps, lease.sessionId, calls, summary),
  });
  for (const call of calls) await recordSummaryCall(deps, lease.sessionId, request.spentFor, call);
  if (result.kind !== 'compacted') {
    const reason = result.kind === 'nothing-to-compact' ? 'nothing to compact yet' : result.reason;
    const unavailable = result.kind === 'unchanged' && result.unavailable;
    // Only an automatic compression that could have helped and did not counts towards anti-thrash.
    await recordCompressionUnchanged(db, lease, reason, !unavailable && request.trigger !== 'command');
    recordCompression(unavailable ? 'unavailable' : 'unchanged', (performance.now() - started) / 1000, summary.ms / 1000);
    logger.warn({ sessionId: lease.sessionId, trigger: request.trigger, reason }, 'session not compressed');
    const notice = unavailable && (await takeNotice(db, lease, 'unavailable')) ? UNAVAILABLE_NOTICE : undefined;
    return { kind: 'unchanged', reason, notice };
  }
  const systemPrompt = await deps.buildPrompt();
  const tokensBefore = estimateRequestTokens(systemPrompt, messages, deps.tools);
  const tokensAfter = estimateRequestTokens(systemPrompt, result.messages, deps.tools);
  const childId = await commitCompaction(db, lease, {
    trigger: request.trigger,
    systemPrompt,
    messages: result.messages.map(toNewMessage),
    ineffective: tokensAfter >= budget.threshold,
    stats: { messagesBefore: messages.length, tokensBefore, tokensAfter, summarised: result.summarised, fallback: result.fallback },
    answer: request.answer ? { eventId: request.answer.eventId, text: request.answer.text(result.summarised) } : undefined,
  });
  if (childId === undefined) return { kind: 'unchanged', reason: 'the compression claim was lost', notice: undefined };
  recordCompression(result.fallback ? 'fallback' : 'compressed', (performance.now() - started) / 1000, summary.ms / 1000);
  logger.info(
    { sessionId: lease.sessionId, childId, trigger: request.trigger, summarised: result.summarised, fallback: result.fallback, tokensBefore, tokensAfter },
    'session compressed into a child session',
  );
  return { kind: 'compressed', childId, summarised: result.summarised, fallback: result.fallback, tokensBefore, tokensAfter };
}
