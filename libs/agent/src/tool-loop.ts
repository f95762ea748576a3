import { completeWithRetry } from './complete-with-retry.ts';
import type { RetryOptions } from './complete-with-retry.ts';
import { ProviderError } from './provider-error.ts';
import type { ChatMessage, CompletionResult, Provider, ToolCall, ToolDefinition } from './types.ts';

export interface ToolRunner {
  definitions: ToolDefinition[];
  execute(call: ToolCall, signal: AbortSignal): Promise<{ content: string; isError: boolean }>;
  isReplaySafe(name: string): boolean;
}

export interface ToolResultMessage {
  role: 'tool';
  content: string;
  tool_call_id: string;
  name: string;
}

export interface ModelCallRecord {
  provider: string;
  model: string;
  latencyMs: number;
  result: CompletionResult;
}

/** Persistence seams: the worker writes each step under the session lease before going on. */
export interface LoopHooks {
  /** An assistant step that asked for tools, with the model call that produced it. */
  onToolStep(message: Extract<ChatMessage, { role: 'assistant' }>, call: ModelCallRecord): Promise<void>;
  onToolResults(results: ToolResultMessage[]): Promise<void>;
  /** Called between steps; a returned message is injected into the running turn (steer mode). */
  pollInjected?(): Promise<ChatMessage[]>;
}

export type LoopOutcome = 'answered' | 'iteration_limit' | 'provider_error';

export interface LoopResult {
  text: string;
  outcome: LoopOutcome;
  iterations: number;
  /** The model call that produced the final answer, when there was one. */
  finalCall: ModelCallRecord | undefined;
}

export interface LoopOptions {
  provider: Provider;
  sessionId: string;
  system: string;
  history: ChatMessage[];
  tools: ToolRunner;
  maxIterations: number;
  retry: RetryOptions;
  signal: AbortSignal;
  hooks: LoopHooks;
  /**
   * A fresh signal for each model call. When it aborts (interrupt mode: a new message arrived)
   * the call is dropped and the loop goes round again, picking the new message up through
   * `pollInjected`; the turn itself goes on.
   */
  modelSignal?: () => AbortSignal;
  /** Runs before each model call; throws to stop the turn (e.g. the session lease is gone). */
  beforeModelCall?: () => Promise<void>;
}

export const INTERRUPTED_RESULT =
  'Interrupted, outcome unknown: the worker running this tool stopped before it reported a result. ' +
  'The action may or may not have happened; check before repeating it.';

/** Tool calls of the last assistant step that have no result yet (a turn resumed after a crash). */
export function unansweredToolCalls(history: ChatMessage[]): ToolCall[] {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message?.role === 'assistant') {
      const answered = new Set(
        history.slice(i + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])),
      );
      return (message.tool_calls ?? []).filter((call) => !answered.has(call.id));
    }
    if (message?.role === 'user') return [];
  }
  return [];
}

async function runCalls(
  calls: ToolCall[],
  tools: ToolRunner,
  signal: AbortSignal,
  resumed: boolean,
): Promise<ToolResultMessage[]> {
  const results: ToolResultMessage[] = [];
  for (const call of calls) {
    signal.throwIfAborted();
    if (resumed && !tools.isReplaySafe(call.name)) {
      results.push({ role: 'tool', tool_call_id: call.id, name: call.name, content: INTERRUPTED_RESULT });
      continue;
    }
    const outcome = await tools.execute(call, signal);
    results.push({ role: 'tool', tool_call_id: call.id, name: call.name, content: outcome.content });
  }
  return results;
}

export function describeProviderFailure(error: ProviderError): string {
  const status = error.status === undefined ? '' : ` (HTTP ${error.status})`;
  const hints: Record<string, string> = {
    rate_limit: 'The model provider is rate limiting requests; try again in a minute.',
    server: 'The model provider is having trouble; try again in a moment.',
    timeout: 'The model provider did not answer in time; try again, or raise HERALD_MODEL_TIMEOUT_MS.',
    connection: 'Herald could not reach the model provider; check OPENAI_BASE_URL / ANTHROPIC_BASE_URL and the network.',
    malformed: 'The model provider sent an answer Herald could not read; try again.',
    auth: 'The model provider refused the credentials; check OPENAI_API_KEY / ANTHROPIC_API_KEY.',
    bad_request: 'The model provider rejected the request; check HERALD_MODEL.',
    aborted: 'The request was cancelled.',
  };
  return `Sorry, I could not answer: the model call failed${status}. ${hints[error.kind] ?? ''}`.trim();
}

/**
 * The agent loop: model call, tool calls, results, again, until a final answer or the iteration
 * limit. Each step goes through the hooks before the next begins, so a crashed turn resumes from
 * what was persisted.
 */
export async function runToolLoop(options: LoopOptions): Promise<LoopResult> {
  const { provider, tools, signal, hooks } = options;
  const messages = [...options.history];
  const pending = unansweredToolCalls(messages);
  if (pending.length > 0) {
    const results = await runCalls(pending, tools, signal, true);
    await hooks.onToolResults(results);
    messages.push(...results);
  }
  for (let iteration = 1; iteration <= options.maxIterations; iteration++) {
    if (hooks.pollInjected) messages.push(...(await hooks.pollInjected()));
    await options.beforeModelCall?.();
    const started = performance.now();
    const callSignal = options.modelSignal ? AbortSignal.any([signal, options.modelSignal()]) : signal;
    let result: CompletionResult;
    try {
      result = await completeWithRetry(
        provider,
        { sessionId: options.sessionId, system: options.system, messages, tools: tools.definitions, signal: callSignal },
        options.retry,
      );
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (callSignal.aborted) continue;
      if (!ProviderError.isInstance(error)) throw error;
      return { text: describeProviderFailure(error), outcome: 'provider_error', iterations: iteration, finalCall: undefined };
    }
    const call: ModelCallRecord = {
      provider: provider.name,
      model: result.model,
      latencyMs: Math.round(performance.now() - started),
      result,
    };
    if (result.toolCalls.length === 0) {
      return { text: result.content, outcome: 'answered', iterations: iteration, finalCall: call };
    }
    const step: Extract<ChatMessage, { role: 'assistant' }> = {
      role: 'assistant',
      content: result.content,
      tool_calls: result.toolCalls,
    };
    await hooks.onToolStep(step, call);
    messages.push(step);
    const results = await runCalls(result.toolCalls, tools, signal, false);
    await hooks.onToolResults(results);
    messages.push(...results);
  }
  return {
    text:
      `I stopped after ${options.maxIterations} tool-calling steps without reaching a final answer ` +
      '(the iteration limit, HERALD_MAX_ITERATIONS). Ask me to continue, or narrow the task.',
    outcome: 'iteration_limit',
    iterations: options.maxIterations,
    finalCall: undefined,
  };
}
