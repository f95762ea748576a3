import type { Config, PriceTable } from '@herald/core';
import { modelCallRow, runToolLoop, toChatMessages } from '@herald/agent';
import type { ChatMessage, ModelCallRecord, Provider, ToolCall, ToolDefinition, ToolRunner } from '@herald/agent';
import { fencedReviewWrite } from '@herald/knowledge';
import { sessionRecord } from '@herald/session';
import { recordModelCall } from '@herald/inbox';
import { loadTranscript } from '@herald/transcript';
import type { Db } from '@herald/db';
import type { ReviewResult, ReviewRun } from '@herald/knowledge';
import { ToolGate, toolSucceeded } from '@herald/tools';
import type { ToolRegistry } from '@herald/tools';
import { join } from 'node:path';
import { refusedToolResult, REVIEW_MAX_ITERATIONS, REVIEW_TOOL_NAMES, reviewInstruction } from './review-prompt.ts';

export interface ReviewAgentDependencies {
  config: Config;
  db: Db;
  provider: Provider;
  registry: ToolRegistry;
  /** What the review's model calls cost (HERALD_PRICES_FILE, then the built-in table); the built-in table when not given. */
  prices?: PriceTable | undefined;
}

const failureMarker = Symbol.for('herald.review-run-failed');

/** The review could not finish (model error, unreadable session): worth another attempt later. */
export class ReviewRunError extends Error {
  readonly [failureMarker] = true;
  override readonly name = 'ReviewRunError';
  static isInstance(value: unknown): value is ReviewRunError {
    return typeof value === 'object' && value !== null && failureMarker in value;
  }
}

/** One saved change, as shown in the review's outcome. */
interface ReviewAction {
  tool: string;
  action: string;
  target?: string;
  name?: string;
  file_path?: string;
  content?: string;
  message?: string;
}

function describeAction(call: ToolCall, result: string): ReviewAction | undefined {
  if (!toolSucceeded(result)) return undefined;
  const parsedResult = JSON.parse(result) as { message?: unknown };
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(call.arguments || '{}') as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  if (call.name === 'memory') {
    const operations = Array.isArray(args.operations) ? (args.operations as Record<string, unknown>[]) : [args];
    return {
      tool: 'memory',
      action: operations.map((op) => text(op.action) ?? 'add').join(','),
      target: text(args.target) ?? 'memory',
      content: operations.map((op) => text(op.content) ?? text(op.old_text) ?? '').join(' | '),
    };
  }
  if (call.name === 'skill_manage') {
    return {
      tool: 'skill_manage',
      action: text(args.action) ?? '',
      name: text(args.name) ?? '',
      ...(text(args.file_path) ? { file_path: text(args.file_path) } : {}),
      ...(text(parsedResult.message) ? { message: text(parsedResult.message) } : {}),
    };
  }
  return undefined;
}

/** The session's stored prompt and its transcript up to the reviewed turn, then the instruction. */
async function reviewConversation(db: Db, review: ReviewRun['review']): Promise<{ system: string; platform: string; history: ChatMessage[] }> {
  const session = await sessionRecord(db, review.session_id);
  if (!session?.systemPrompt) throw new ReviewRunError(`session ${review.session_id} has no stored system prompt`);
  const transcript = await loadTranscript(db, review.session_id);
  let end = -1;
  transcript.forEach((message, index) => {
    if (message.turnId === review.turn_id) end = index;
  });
  if (end === -1) throw new ReviewRunError(`turn ${review.turn_id} has no messages in session ${review.session_id}`);
  const history: ChatMessage[] = [...toChatMessages(transcript.slice(0, end + 1)), { role: 'user', content: reviewInstruction(review.kinds) }];
  return { system: session.systemPrompt, platform: session.platform, history };
}

/** The session's tool definitions, byte for byte, of which only memory and skill tools execute. */
function reviewTools(deps: ReviewAgentDependencies, run: ReviewRun, platform: string, signal: AbortSignal): ToolRunner {
  const { db, registry } = deps;
  const review = run.review;
  const definitions = JSON.parse(review.tool_definitions) as ToolDefinition[];
  const offered = new Set(definitions.map((definition) => definition.name));
  const allowed = REVIEW_TOOL_NAMES.filter((name) => offered.has(name));
  const context = {
    sessionId: review.session_id,
    // Per-turn state of tools (the memory tool's failure count) is per review.
    turnId: review.id,
    profileId: review.profile_id,
    userId: review.user_id,
    platform,
    role: 'review' as const,
    workspaceDir: join(deps.config.tools.workspaceRoot, review.profile_id, review.session_id),
    db,
    signal,
    fencedWrite: <T>(fn: Parameters<typeof fencedReviewWrite<T>>[2]) => fencedReviewWrite(db, run, fn),
    review: { id: review.id, viewed: new Set<string>() },
  };
  // The same per-call checks as a chat turn, with the review's narrow permitted set.
  const gate = new ToolGate({
    registry,
    offered: [...offered],
    permitted: allowed,
    approvalTimeoutMs: deps.config.tools.approvalTimeoutMs,
  });
  return {
    definitions,
    isReplaySafe: () => false,
    execute: async (call, toolSignal) => {
      if (!REVIEW_TOOL_NAMES.includes(call.name)) return { isError: true, content: refusedToolResult(call.name) };
      const { wait, ...outcome } = await gate.execute(call, { ...context, signal: toolSignal });
      // Background roles are refused before they could wait for a person; never park a review.
      return wait === undefined ? outcome : { isError: true, content: refusedToolResult(call.name) };
    },
  };
}

/**
 * Runs one background review of a session: the session's stored system prompt and tool
 * definitions byte for byte, its transcript up to the reviewed turn, and the review instruction as
 * the last user message, so the provider serves everything before the instruction from its prefix
 * cache. Only memory and skill tools may execute; their writes are fenced by the run's attempt, so a run that a later one took over writes nothing.
 * Nothing is written to the session's transcript.
 */
export async function runReview(deps: ReviewAgentDependencies, run: ReviewRun, signal: AbortSignal): Promise<Omit<ReviewResult, 'status' | 'error'>> {
  const review = run.review;
  const { system, platform, history } = await reviewConversation(deps.db, review);
  const tools = reviewTools(deps, run, platform, signal);
  const calls = new Map<string, ToolCall>();
  const actions: ReviewAction[] = [];
  const usage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  // Each call is stored as it lands, priced and counted for the reviewed turn's person and the
  // profile (limits, budgets, GET /v1/usage): a review that fails later has still spent it.
  const count = async (call: ModelCallRecord | undefined) => {
    const row = modelCallRow(call, deps.prices);
    if (!call || !row) return;
    usage.inputTokens += call.result.usage.inputTokens;
    usage.cachedInputTokens += call.result.usage.cachedInputTokens;
    usage.outputTokens += call.result.usage.outputTokens;
    await recordModelCall(deps.db, { kind: 'review', sessionId: review.session_id, turnId: review.turn_id, call: row });
  };
  const result = await runToolLoop({
    provider: deps.provider,
    sessionId: review.session_id,
    system,
    history,
    tools,
    maxIterations: REVIEW_MAX_ITERATIONS,
    retry: { maxRetries: deps.config.model.maxRetries, baseMs: deps.config.model.retryBaseMs },
    signal,
    hooks: {
      onToolStep: async (step, call) => {
        await count(call);
        for (const toolCall of step.tool_calls ?? []) calls.set(toolCall.id, toolCall);
      },
      onToolResults: async (results) => {
        for (const result of results) {
          const call = calls.get(result.tool_call_id);
          const action = call ? describeAction(call, result.content) : undefined;
          if (action) actions.push(action);
        }
      },
    },
  });
  await count(result.finalCall);
  if (result.outcome === 'provider_error') throw new ReviewRunError(result.text);
  const summary = result.outcome === 'iteration_limit' ? `stopped at the review's cap of ${REVIEW_MAX_ITERATIONS} steps` : result.text.trim();
  return { actions, summary: summary === '' ? null : summary.slice(0, 2000), usage };
}
