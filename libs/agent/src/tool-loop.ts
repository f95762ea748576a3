import { randomBytes } from 'node:crypto';
import { linkSignals } from '@herald/core';
import { completeWithRetry } from './complete-with-retry.ts';
import type { RetryOptions } from './complete-with-retry.ts';
import { recordToolCall, setSpanAttributes, withSpan } from '@herald/telemetry';
import { ProviderError } from './provider-error.ts';
import { describeProviderFailure } from './provider-failure.ts';
import type { ChatMessage, CompletionResult, ImageInput, Provider, ToolCall, ToolDefinition } from './types.ts';

export interface ToolRunOutcome<W> {
  content: string;
  /** Images the tool gives the model with its text (a screenshot), already checked that the model takes them. */
  images?: ImageInput[];
  isError: boolean;
  /** 'unknown', 'invalid' and 'refused': three rounds of only those end the turn. */
  errorKind?: string;
  /** The call cannot finish until a person answers: the turn is parked on this. */
  wait?: W;
}

export interface ToolRunner<W = never> {
  definitions: ToolDefinition[];
  execute(call: ToolCall, signal: AbortSignal): Promise<ToolRunOutcome<W>>;
  isReplaySafe(name: string): boolean;
  /**
   * On resume: the pending calls known never to have started (those of a turn that was parked on a
   * person's answer). Every other pending call may have started before a crash.
   */
  notStarted?(): Promise<Set<string>>;
}

export interface ToolResultMessage {
  role: 'tool';
  content: string;
  tool_call_id: string;
  name: string;
  images?: ImageInput[];
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

/** 'context_full': the history must be compacted before the next call (only with `compaction`). */
/** 'limited': beforeModelCall said a limit forbids the next call (the person's token budget). */
export type LoopOutcome = 'answered' | 'iteration_limit' | 'provider_error' | 'tool_errors' | 'waiting' | 'context_full' | 'limited';

export interface LoopResult<W = never> {
  text: string;
  outcome: LoopOutcome;
  iterations: number;
  /** The model call that produced the final answer, when there was one. */
  finalCall: ModelCallRecord | undefined;
  /** Outcome 'context_full': true when the provider refused the prompt, false when the estimate stopped it. */
  overflow?: boolean;
  /** Outcome 'waiting': what the turn is parked on, and the calls after it that never started. */
  wait?: { request: W; notStarted: string[] };
}

/** Rounds in a row where every tool call was unknown, refused or invalid before the turn ends. */
export const MAX_INVALID_TOOL_ROUNDS = 3;

/**
 * What a running turn shows while it runs: pieces of the model's text and tool calls starting and
 * ending. A view only: the committed reply is the answer. A piece of text is placed by `step` (the
 * number of messages before the model call, the same on any worker that resumes the turn),
 * `attempt` (one id per model call attempt: a retried or resumed call starts again at offset 0)
 * and `offset` within that attempt's text, so a follower can skip what it has already shown.
 */
export type LoopProgress = { type: 'delta'; step: number; attempt: string; offset: number; text: string } | { type: 'tool'; name: string; status: 'start' | 'end' | 'error' };

export interface LoopOptions<W = never> {
  /** Streams the model's answers and reports tool calls as they run; without it nothing is streamed. */
  onProgress?: (event: LoopProgress) => void;
  provider: Provider;
  sessionId: string;
  system: string;
  history: ChatMessage[];
  tools: ToolRunner<W>;
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
  /**
   * Runs before each model call; throws to stop the turn (e.g. the session lease is gone), or
   * returns why a limit forbids the call: the turn ends 'limited' with that text as its answer.
   */
  beforeModelCall?: () => Promise<string | undefined>;
  /**
   * When given, the loop stops with outcome 'context_full' instead of calling the model when `due`
   * says the request is past the threshold, and instead of answering with an error when the
   * provider refuses the prompt as too long: the caller compacts and carries on.
   */
  compaction?: { due(messages: ChatMessage[]): boolean };
}

export const INTERRUPTED_RESULT =
  'Interrupted, outcome unknown: the worker running this tool stopped before it reported a result. ' + 'The action may or may not have happened; check before repeating it.';

/** Tool calls of the last assistant step that have no result yet (a turn resumed after a crash). */
export function unansweredToolCalls(history: ChatMessage[]): ToolCall[] {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (message?.role === 'assistant') {
      const answered = new Set(history.slice(i + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
      return (message.tool_calls ?? []).filter((call) => !answered.has(call.id));
    }
    if (message?.role === 'user') return [];
  }
  return [];
}

interface CallsResult<W> {
  results: ToolResultMessage[];
  /** Every call was an unknown or refused tool, or had invalid arguments. */
  allInvalid: boolean;
  lastError: string | undefined;
  wait?: { request: W; notStarted: string[] };
}

/**
 * Runs a step's calls in order. `fresh` is null for a new step; on resume it names the calls known
 * never to have started, and any other unsafe call is reported as interrupted instead of repeated.
 * A call that must wait for a person stops the step: the calls after it have not started.
 */
async function runCalls<W>(calls: ToolCall[], tools: ToolRunner<W>, signal: AbortSignal, fresh: Set<string> | null, onProgress?: LoopOptions<W>['onProgress']): Promise<CallsResult<W>> {
  const results: ToolResultMessage[] = [];
  let invalid = 0;
  let lastError: string | undefined;
  for (const [index, call] of calls.entries()) {
    signal.throwIfAborted();
    if (fresh !== null && !fresh.has(call.id) && !tools.isReplaySafe(call.name)) {
      results.push({ role: 'tool', tool_call_id: call.id, name: call.name, content: INTERRUPTED_RESULT });
      continue;
    }
    onProgress?.({ type: 'tool', name: call.name, status: 'start' });
    const outcome = await measuredExecute(tools, call, signal);
    if (outcome.wait === undefined) onProgress?.({ type: 'tool', name: call.name, status: outcome.isError ? 'error' : 'end' });
    if (outcome.wait !== undefined) {
      return {
        results,
        allInvalid: false,
        lastError,
        wait: { request: outcome.wait, notStarted: calls.slice(index + 1).map((next) => next.id) },
      };
    }
    // A model that keeps calling what it may not (or cannot) call would loop until the iteration limit.
    if (outcome.errorKind === 'unknown' || outcome.errorKind === 'invalid' || outcome.errorKind === 'refused') {
      invalid++;
      lastError = outcome.content;
    }
    results.push({ role: 'tool', tool_call_id: call.id, name: call.name, content: outcome.content, ...(outcome.images?.length ? { images: outcome.images } : {}) });
  }
  return { results, allInvalid: calls.length > 0 && invalid === calls.length, lastError };
}

/** One tool call, counted by tool and outcome and traced. A name the model made up counts as one label. */
function measuredExecute<W>(tools: ToolRunner<W>, call: ToolCall, signal: AbortSignal): Promise<ToolRunOutcome<W>> {
  const started = performance.now();
  return withSpan('herald.tool.call', { 'herald.tool': call.name }, async () => {
    const outcome = await tools.execute(call, signal);
    const result = outcome.wait !== undefined ? 'waiting' : (outcome.errorKind ?? 'ok');
    recordToolCall(outcome.errorKind === 'unknown' ? '(unknown)' : call.name, result, (performance.now() - started) / 1000);
    setSpanAttributes({ 'herald.tool.outcome': result });
    return outcome;
  });
}

function toolErrorsAnswer(partial: string, lastError: string | undefined): string {
  const lead = partial.trim() === '' ? '' : `${partial.trim()}\n\n`;
  return (
    `${lead}I stopped here: my last ${MAX_INVALID_TOOL_ROUNDS} attempts to use tools all failed ` +
    `(unknown or refused tools, or invalid arguments${lastError ? `; the last error was: ${lastError.slice(0, 300)}` : ''}). ` +
    'This answer may be incomplete; tell me how to go on or rephrase the request.'
  );
}

/**
 * The agent loop: model call, tool calls, results, again, until a final answer or the iteration
 * limit. Each step goes through the hooks before the next begins, so a crashed turn resumes from
 * what was persisted.
 */
/**
 * One model call with retries. 'interrupted': the per-call signal (a new message in interrupt
 * mode) cut it short, and the loop asks again with what arrived; a provider failure is returned
 * for the loop to answer; the turn's own abort is thrown.
 */
async function callModel<W>(options: LoopOptions<W>, messages: ChatMessage[]): Promise<ModelCallRecord | ProviderError | 'interrupted'> {
  const { provider, tools, signal } = options;
  const started = performance.now();
  // Not AbortSignal.any: the SDK's listener would keep every call's signal alive (linked-signal.ts).
  const link = options.modelSignal ? linkSignals([signal, options.modelSignal()]) : undefined;
  const callSignal = link?.signal ?? signal;
  const stream = deltaStream(options.onProgress, messages.length, options.retry);
  let result: CompletionResult;
  try {
    result = await completeWithRetry(
      provider,
      {
        sessionId: options.sessionId,
        system: options.system,
        messages,
        tools: tools.definitions,
        signal: callSignal,
        ...(stream ? { onDelta: stream.onDelta, onRestart: stream.onRestart } : {}),
      },
      stream?.retry ?? options.retry,
    );
  } catch (error) {
    if (signal.aborted) throw signal.reason ?? error;
    if (callSignal.aborted) return 'interrupted';
    if (!ProviderError.isInstance(error)) throw error;
    return error;
  } finally {
    link?.dispose();
  }
  return { provider: result.provider ?? provider.name, model: result.model, latencyMs: Math.round(performance.now() - started), result };
}

/**
 * The deltas of one model call as progress events: a retry starts a new attempt at offset 0 (the
 * broken attempt's text is never part of the answer).
 */
function deltaStream(onProgress: LoopOptions['onProgress'], step: number, retry: RetryOptions): { onDelta: (text: string) => void; onRestart: () => void; retry: RetryOptions } | undefined {
  if (!onProgress) return undefined;
  const newAttempt = () => randomBytes(6).toString('hex');
  let attempt = newAttempt();
  let offset = 0;
  const restart = () => {
    attempt = newAttempt();
    offset = 0;
  };
  return {
    onDelta: (text) => {
      onProgress({ type: 'delta', step, attempt, offset, text });
      offset += text.length;
    },
    onRestart: restart,
    retry: {
      ...retry,
      onRetry: (error, number, delayMs) => {
        restart();
        retry.onRetry?.(error, number, delayMs);
      },
    },
  };
}

export async function runToolLoop<W = never>(options: LoopOptions<W>): Promise<LoopResult<W>> {
  const { tools, signal, hooks } = options;
  const messages = [...options.history];
  const pending = unansweredToolCalls(messages);
  if (pending.length > 0) {
    const done = await runCalls(pending, tools, signal, (await tools.notStarted?.()) ?? new Set(), options.onProgress);
    if (done.results.length > 0) await hooks.onToolResults(done.results);
    messages.push(...done.results);
    if (done.wait) return { text: '', outcome: 'waiting', iterations: 0, finalCall: undefined, wait: done.wait };
  }
  let invalidRounds = 0;
  for (let iteration = 1; iteration <= options.maxIterations; iteration++) {
    if (hooks.pollInjected) messages.push(...(await hooks.pollInjected()));
    const full = { text: '', outcome: 'context_full' as const, iterations: iteration - 1, finalCall: undefined };
    if (options.compaction?.due(messages)) return full;
    const limited = await options.beforeModelCall?.();
    if (limited !== undefined) return { text: limited, outcome: 'limited', iterations: iteration - 1, finalCall: undefined };
    const attempt = await callModel(options, messages);
    if (attempt === 'interrupted') continue;
    if (ProviderError.isInstance(attempt)) {
      if (attempt.kind === 'context_overflow' && options.compaction) return { ...full, overflow: true };
      return { text: describeProviderFailure(attempt), outcome: 'provider_error', iterations: iteration, finalCall: undefined };
    }
    const call = attempt;
    const result = call.result;
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
    const done = await runCalls(result.toolCalls, tools, signal, null, options.onProgress);
    if (done.results.length > 0) await hooks.onToolResults(done.results);
    messages.push(...done.results);
    if (done.wait) return { text: result.content, outcome: 'waiting', iterations: iteration, finalCall: undefined, wait: done.wait };
    invalidRounds = done.allInvalid ? invalidRounds + 1 : 0;
    if (invalidRounds >= MAX_INVALID_TOOL_ROUNDS) {
      return { text: toolErrorsAnswer(result.content, done.lastError), outcome: 'tool_errors', iterations: iteration, finalCall: undefined };
    }
  }
  return {
    text: `I stopped after ${options.maxIterations} tool-calling steps without reaching a final answer ` + '(the iteration limit, HERALD_MAX_ITERATIONS). Ask me to continue, or narrow the task.',
    outcome: 'iteration_limit',
    iterations: options.maxIterations,
    finalCall: undefined,
  };
}
