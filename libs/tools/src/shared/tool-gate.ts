import { TOOL_CALL, toolCallArgs } from './tool-search.ts';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { findWait, isPatternApproved, recordRefusal } from '@herald/waits';
import { LeaseLostError } from '@herald/leases';
import { isConnectionError } from '@herald/db';
import { MODEL_IMAGE_MAX_BYTES } from '@herald/attachments';
import type { ImageInput } from '@herald/core';
import type { NewWait } from '@herald/inbox';
import type { WaitView } from '@herald/waits';
import type { ToolRegistry } from './registry.ts';
import type { CallContext, PersonAnswer, Tool, ToolContext } from './tool.ts';

/** Tool results longer than this are cut with a marker so one call cannot flood the context. */
export const MAX_TOOL_RESULT_CHARS = 50_000;

export function capToolResult(content: string, max = MAX_TOOL_RESULT_CHARS): string {
  if (content.length <= max) return content;
  return `${content.slice(0, max)}\n[truncated: ${content.length - max} more characters not shown]`;
}

/** unknown/invalid are the model's mistakes (repeated, they end the turn); refused is policy. */
export type CallErrorKind = 'unknown' | 'invalid' | 'refused' | 'failed';

/** A call that cannot go on until a person answers; the turn is parked on it. */
export type WaitRequest = Omit<NewWait, 'notStarted'>;

export interface CallOutcome {
  content: string;
  /** Images the tool gave the model with its result (showModel). */
  images?: ImageInput[];
  isError: boolean;
  errorKind?: CallErrorKind;
  /** Set when the turn must wait for a person before this call can finish. */
  wait?: WaitRequest;
}

export interface GateOptions {
  registry: ToolRegistry;
  /** The tools offered to the model in this session (their definitions were sent). */
  offered: readonly string[];
  /** What this caller may run now: re-resolved from the current policy for the caller. */
  permitted: readonly string[];
  approvalTimeoutMs: number;
  onRefusal?(refusal: { tool: string; reason: string }): void;
}

/** A wait on child runs lapses only after this long (ten years): in practice, never. */
const RUN_WAIT_MS = 10 * 365 * 24 * 3600 * 1000;

class WaitSignal extends Error {
  readonly request: WaitRequest;
  constructor(request: WaitRequest) {
    super('waiting for the person');
    this.request = request;
  }
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`).join('; ');
}

function minutes(ms: number): string {
  const value = Math.round(ms / 60_000);
  return value >= 1 ? `${value} minute${value === 1 ? '' : 's'}` : `${Math.round(ms / 1000)} seconds`;
}

/** tool_call {name, arguments} as the call it stands for, under the same call id; never itself again. */
function unwrapToolCall(call: { id: string; arguments: string }): { id: string; name: string; arguments: string } | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(call.arguments || '{}');
  } catch (error) {
    return { error: `Invalid arguments for tool 'tool_call': not valid JSON (${(error as Error).message}).` };
  }
  const parsed = toolCallArgs.safeParse(raw);
  if (!parsed.success) return { error: `Invalid arguments for tool 'tool_call': ${formatIssues(parsed.error)}` };
  if (parsed.data.name === TOOL_CALL) return { error: 'tool_call cannot call tool_call; name the tool itself.' };
  return { id: call.id, name: parsed.data.name, arguments: JSON.stringify(parsed.data.arguments) };
}

/**
 * Runs one tool call after checking it again: the tool exists, the caller may use it now, the
 * arguments fit its schema, it is not on the hardline list, and a person approved it if it needs
 * approval. Never throws for the model's mistakes or for policy: those come back as error results
 * the model reads. Only lease loss, aborts and storage outages escape, because they end the turn.
 */
export class ToolGate {
  readonly #options: GateOptions;
  readonly #permitted: Set<string>;

  constructor(options: GateOptions) {
    this.#options = options;
    this.#permitted = new Set(options.permitted);
  }

  /** What the model may call: offered and still permitted. */
  available(): string[] {
    return this.#options.offered.filter((name) => this.#permitted.has(name)).sort();
  }

  /** `hookApproval`: a pre_tool_call hook asked for a person's approval of this call (docs/hooks.md). */
  async execute(call: { id: string; name: string; arguments: string }, context: ToolContext, hookApproval?: { message: string; ruleKey?: string | undefined }): Promise<CallOutcome> {
    if (call.name === TOOL_CALL && this.#permitted.has(TOOL_CALL) && this.#options.offered.includes(TOOL_CALL)) {
      const inner = unwrapToolCall(call);
      if ('error' in inner) return { isError: true, errorKind: 'invalid', content: inner.error };
      return this.execute(inner, context, hookApproval);
    }
    const tool = this.#options.registry.get(call.name);
    if (!tool) {
      return {
        isError: true,
        errorKind: 'unknown',
        content: `Tool '${call.name}' does not exist. Available tools: ${this.available().join(', ')}`,
      };
    }
    if (tool.unavailable !== undefined) {
      return this.#refuse(call.name, context, `Tool '${call.name}' is not available on this worker: ${tool.unavailable}. Available tools: ${this.available().join(', ')}`);
    }
    if (!this.#permitted.has(call.name) || !this.#options.offered.includes(call.name)) {
      return this.#refuse(
        call.name,
        context,
        `Tool '${call.name}' is not permitted here (it is not enabled for this ${context.role === 'chat' ? `${context.platform} chat` : `${context.role} run`} or for this person). Available tools: ${this.available().join(', ')}`,
      );
    }
    let raw: unknown;
    try {
      raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (error) {
      return {
        isError: true,
        errorKind: 'invalid',
        content: `Invalid arguments for tool '${call.name}': not valid JSON (${(error as Error).message}). Send a JSON object.`,
      };
    }
    const parsed = tool.schema.safeParse(raw);
    if (!parsed.success) {
      return { isError: true, errorKind: 'invalid', content: `Invalid arguments for tool '${call.name}': ${formatIssues(parsed.error)}` };
    }
    const args = parsed.data;
    const hardline = tool.refuse?.(args) ?? null;
    if (hardline !== null) {
      return this.#refuse(call.name, context, `BLOCKED: ${hardline}. This is never allowed, whoever approves it; do not retry it.`);
    }
    const need = tool.needsApproval?.(args) ?? (hookApproval ? { patternKey: `hook:${hookApproval.ruleKey ?? call.name}`, reason: hookApproval.message } : null);
    if (need !== null) {
      const verdict = await this.#approval(tool, call, context, need.patternKey, need.reason);
      if (verdict !== 'run') return verdict;
    }
    return this.#run(tool, args, call, context);
  }

  async #approval(tool: Tool, call: { id: string; name: string; arguments: string }, context: ToolContext, patternKey: string, reason: string): Promise<'run' | CallOutcome> {
    if (context.role !== 'chat') {
      return this.#refuse(
        tool.name,
        context,
        `BLOCKED: this call needs a person's approval (${reason}) and ${context.role} runs never get approvals. Do not retry it; find another way or report that it needs a person.`,
      );
    }
    const wait = await findWait(context.db, context.turnId, call.id);
    if (wait) return this.#approvalVerdict(wait, reason);
    if (await isPatternApproved(context.db, context.sessionId, patternKey)) return 'run';
    return {
      isError: false,
      content: '',
      wait: {
        id: randomUUID(),
        toolCallId: call.id,
        kind: 'approval',
        toolName: tool.name,
        arguments: call.arguments,
        patternKey,
        prompt: reason,
        choices: null,
        timeoutMs: this.#options.approvalTimeoutMs,
      },
    };
  }

  #approvalVerdict(wait: WaitView, reason: string): 'run' | CallOutcome {
    if (wait.status === 'approved') return 'run';
    if (wait.status === 'denied') {
      const why = wait.answer ? ` They said: ${wait.answer}` : '';
      return { isError: true, errorKind: 'refused', content: `BLOCKED: the person denied this call (${reason}).${why} Do not retry it; ask them or do something else.` };
    }
    if (wait.status === 'expired') {
      return {
        isError: true,
        errorKind: 'refused',
        content: `BLOCKED: nobody approved this call (${reason}) within ${minutes(this.#options.approvalTimeoutMs)}. Silence is not consent; do not retry it without asking.`,
      };
    }
    // Still pending: the turn should not have resumed; park it again on the same wait.
    return { isError: false, content: '', wait: { ...waitRequestOf(wait), timeoutMs: Math.max(1000, wait.expiresAt.getTime() - Date.now()) } };
  }

  async #run(tool: Tool, args: unknown, call: { id: string; name: string; arguments: string }, context: ToolContext): Promise<CallOutcome> {
    const images: ImageInput[] = [];
    const callContext: CallContext = {
      ...context,
      toolCallId: call.id,
      toolDefinitions: (names) => this.#options.registry.definitions(names),
      showModel: (image) => {
        if (context.modelTakesImages !== true || image.bytes.length > MODEL_IMAGE_MAX_BYTES) return false;
        images.push({ mime: image.mime, data: image.bytes.toString('base64') });
        return true;
      },
      askPerson: (question, choices) => this.#askPerson(tool, call, context, question, choices),
      parkOnRuns: (waitId, runs) => {
        throw new WaitSignal({
          id: waitId,
          toolCallId: call.id,
          kind: 'subagents',
          toolName: tool.name,
          arguments: call.arguments,
          patternKey: null,
          prompt: `waiting for ${runs} child run${runs === 1 ? '' : 's'}`,
          choices: null,
          // No wall-clock cap on children (Hermes' child_timeout_seconds 0): the wait never lapses.
          timeoutMs: RUN_WAIT_MS,
        });
      },
    };
    let content: string;
    try {
      content = await tool.execute(args, callContext);
    } catch (error) {
      if (error instanceof WaitSignal) return { isError: false, content: '', wait: error.request };
      if (error instanceof RefusedSignal) return this.#refuse(tool.name, context, error.message);
      // Losing the lease, an abort or a storage outage ends the turn; anything else is the tool's
      // failure, which the model should see and work around.
      if (context.signal.aborted || LeaseLostError.isInstance(error) || isConnectionError(error)) throw error;
      return { isError: true, errorKind: 'failed', content: `Tool '${call.name}' failed: ${(error as Error)?.message ?? String(error)}` };
    }
    return { isError: false, content: capToolResult(content), ...(images.length === 0 ? {} : { images }) };
  }

  async #askPerson(tool: Tool, call: { id: string; name: string; arguments: string }, context: ToolContext, question: string, choices: readonly string[] | undefined): Promise<PersonAnswer> {
    if (context.role !== 'chat') {
      throw new RefusedSignal(`BLOCKED: ${context.role} runs have nobody to ask. Decide without asking, or report what you need.`);
    }
    const wait = await findWait(context.db, context.turnId, call.id);
    if (!wait) {
      throw new WaitSignal({
        id: randomUUID(),
        toolCallId: call.id,
        kind: 'clarify',
        toolName: tool.name,
        arguments: call.arguments,
        patternKey: null,
        prompt: question,
        choices: choices && choices.length > 0 ? [...choices] : null,
        timeoutMs: this.#options.approvalTimeoutMs,
      });
    }
    if (wait.status === 'pending') throw new WaitSignal(waitRequestOf(wait));
    return { answered: wait.status === 'answered', answer: wait.answer };
  }

  async #refuse(tool: string, context: ToolContext, content: string): Promise<CallOutcome> {
    this.#options.onRefusal?.({ tool, reason: content });
    await context.fencedWrite((trx) =>
      recordRefusal(trx, {
        sessionId: context.sessionId,
        turnId: context.turnId,
        toolName: tool,
        role: context.role,
        userId: context.userId,
        reason: content,
      }),
    );
    return { isError: true, errorKind: 'refused', content };
  }
}

class RefusedSignal extends Error {}

function waitRequestOf(wait: WaitView): WaitRequest {
  return {
    id: wait.id,
    toolCallId: wait.toolCallId,
    kind: wait.kind,
    toolName: wait.toolName,
    arguments: wait.arguments,
    patternKey: null,
    prompt: wait.prompt,
    choices: wait.choices,
    timeoutMs: Math.max(1000, wait.expiresAt.getTime() - Date.now()),
  };
}
