import type { Transaction } from 'kysely';
import type { Logger } from '@herald/core';
import type { ChatMessage, CompletionRequest, Provider, ToolCall, ToolRunner, ToolRunOutcome } from '@herald/agent';
import { appendAudit, argumentDigest } from '@herald/audit';
import type { AuditEntry } from '@herald/audit';
import type { Database, Db } from '@herald/db';
import { decisionAudit, hookFiring, recordHookFiring } from '@herald/hooks';
import type { Directive, HookEvent, Hooks, HookSet } from '@herald/hooks';
import type { WaitRequest } from '@herald/tools';
import { isOnlyTurnOfSession } from '@herald/session';
import { findWait } from '@herald/waits';

/** A hook's `approve` directive: the call goes to the person like any call needing approval. */
export interface HookApproval {
  message: string;
  ruleKey?: string | undefined;
}

/** The tool runner the turn builds, whose execute can be told that a hook asked for approval. */
export interface GatedRunner extends ToolRunner<WaitRequest> {
  execute(call: ToolCall, signal: AbortSignal, approval?: HookApproval): Promise<ToolRunOutcome<WaitRequest>>;
}

export interface TurnScope {
  db: Db;
  logger: Logger;
  sessionId: string;
  turnId: string;
  profileId: string;
  userId: string;
  platform: string;
  /** A write under the session lease (fails with LeaseLostError once the lease is gone). */
  write<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
}

function parsedArguments(raw: string): unknown {
  try {
    return raw.trim() === '' ? {} : (JSON.parse(raw) as unknown);
  } catch {
    return raw;
  }
}

/**
 * The hooks of one turn: wraps the tool runner (pre_tool_call, transform_tool_result,
 * post_tool_call, approvals) and the provider (pre_llm_call, post_llm_call), and keeps the audit
 * entries of the tool calls until their results are stored, in the same statement (takeAudit, @herald/inbox recordResults).
 */
export class TurnHooks {
  readonly #set: HookSet;
  readonly #scope: TurnScope;
  readonly #pendingAudit: AuditEntry[] = [];
  #llmContext: Promise<string | null> | undefined;

  private constructor(set: HookSet, scope: TurnScope) {
    this.#set = set;
    this.#scope = scope;
  }

  static async open(hooks: Hooks | undefined, scope: TurnScope): Promise<TurnHooks | null> {
    if (hooks === undefined) return null;
    const turnHooks = new TurnHooks(await hooks.forProfile(scope.profileId), scope);
    await turnHooks.#sessionStart();
    return turnHooks;
  }

  /** Has this turn already fired `event` for `key` (a tool call id, or '' for the turn)? */
  async #firing(key: string, event: HookEvent): Promise<{ directive: Directive | null } | undefined> {
    return hookFiring(this.#scope.db, this.#scope.turnId, key, event);
  }

  /** on_session_start: on the session's first turn only, once (a resumed first turn does not fire it again). */
  async #sessionStart(): Promise<void> {
    if (!this.#set.has('on_session_start')) return;
    const { db, sessionId, turnId } = this.#scope;
    if (!(await isOnlyTurnOfSession(db, sessionId, turnId)) || (await this.#firing('', 'on_session_start'))) return;
    await this.observe('on_session_start', {}, 'session_start');
    await this.#scope.write((trx) => recordHookFiring(trx, turnId, '', 'on_session_start'));
  }

  /**
   * An observer event fired once per turn (subagent_start, subagent_stop): recorded in
   * hook_firings under the lease after it fired, so a resumed turn does not fire it again.
   */
  async once(event: HookEvent, extra: Record<string, unknown>): Promise<void> {
    if (!this.#set.has(event) || (await this.#firing('', event))) return;
    await this.observe(event, extra, event);
    await this.#scope.write((trx) => recordHookFiring(trx, this.#scope.turnId, '', event));
  }

  #where(toolCallId?: string) {
    const { userId, profileId, sessionId, turnId } = this.#scope;
    return { actor: userId, profileId, sessionId, turnId, ...(toolCallId === undefined ? {} : { toolCallId }) };
  }

  #payload(extra: Record<string, unknown>): Record<string, unknown> {
    const { sessionId, turnId, profileId, userId, platform } = this.#scope;
    return { session_id: sessionId, turn_id: turnId, profile_id: profileId, user_id: userId, platform, ...extra };
  }

  /** An observer event; its failures are the hooks' own and never reach the turn. */
  async observe(event: HookEvent, extra: Record<string, unknown>, key?: string): Promise<void> {
    if (!this.#set.has(event)) return;
    const fired = await this.#set.fire(event, this.#payload(extra), { key: key === undefined ? undefined : `${this.#scope.turnId}:${key}` });
    const audit = decisionAudit(event, fired.decisions, this.#where());
    if (audit.length > 0) await this.#scope.write((trx) => appendAudit(trx, audit));
  }

  /**
   * pre_tool_call, exactly once per tool call of the turn: the directive is stored (hook_firings)
   * with its audit entries before the tool runs, and a resumed turn reads it back instead of asking again.
   */
  async #preToolCall(call: ToolCall, signal: AbortSignal): Promise<Directive | null> {
    if (!this.#set.has('pre_tool_call')) return null;
    const { turnId } = this.#scope;
    const prior = await this.#firing(call.id, 'pre_tool_call');
    if (prior) return prior.directive;
    const payload = this.#payload({ tool_name: call.name, tool_input: parsedArguments(call.arguments), tool_call_id: call.id });
    const fired = await this.#set.fire('pre_tool_call', payload, { key: `${turnId}:${call.id}`, signal });
    await this.#scope.write(async (trx) => {
      await recordHookFiring(trx, turnId, call.id, 'pre_tool_call', fired.directive);
      await appendAudit(trx, decisionAudit('pre_tool_call', fired.decisions, this.#where(call.id)));
    });
    return fired.directive;
  }

  async #transform(call: ToolCall, content: string, signal: AbortSignal): Promise<string> {
    if (!this.#set.has('transform_tool_result')) return content;
    const payload = this.#payload({ tool_name: call.name, tool_input: parsedArguments(call.arguments), tool_call_id: call.id, result: content });
    const fired = await this.#set.fire('transform_tool_result', payload, { signal });
    const audit = decisionAudit('transform_tool_result', fired.decisions, this.#where(call.id));
    // Kept for the transaction that stores the result: the record and the replaced result commit together.
    this.#pendingAudit.push(...audit);
    return fired.directive?.action === 'replace' ? fired.directive.text : content;
  }

  /** post_approval_response: once, when the call a person answered is taken up again. */
  async #approvalAnswered(call: ToolCall): Promise<void> {
    if (!this.#set.has('post_approval_response')) return;
    const wait = await findWait(this.#scope.db, this.#scope.turnId, call.id);
    if (!wait || wait.kind !== 'approval' || wait.status === 'pending' || (await this.#firing(call.id, 'post_approval_response'))) return;
    await this.observe('post_approval_response', { tool_name: call.name, tool_call_id: call.id, wait_id: wait.id, status: wait.status, answered_by: wait.answeredBy }, `${call.id}:answer`);
    await this.#scope.write((trx) => recordHookFiring(trx, this.#scope.turnId, call.id, 'post_approval_response'));
  }

  async #execute(runner: GatedRunner, call: ToolCall, signal: AbortSignal): Promise<ToolRunOutcome<WaitRequest>> {
    const directive = await this.#preToolCall(call, signal);
    await this.#approvalAnswered(call);
    let outcome: ToolRunOutcome<WaitRequest>;
    if (directive?.action === 'block') outcome = { content: directive.message, isError: true, errorKind: 'refused' };
    else if (directive?.action === 'approve') outcome = await runner.execute(call, signal, { message: directive.message, ruleKey: directive.rule_key });
    else outcome = await runner.execute(call, signal);
    if (outcome.wait !== undefined) {
      if (outcome.wait.kind === 'approval') {
        await this.observe('pre_approval_request', { tool_name: call.name, tool_call_id: call.id, wait_id: outcome.wait.id, prompt: outcome.wait.prompt }, `${call.id}:approval`);
      }
      return outcome;
    }
    const content = await this.#transform(call, outcome.content, signal);
    const result = (outcome.errorKind ?? 'ok') as string;
    await this.observe('post_tool_call', { tool_name: call.name, tool_call_id: call.id, outcome: result, is_error: outcome.isError, result: content }, `${call.id}:post`);
    this.#pendingAudit.push({
      kind: 'tool_call',
      ...this.#where(),
      subject: call.name,
      detail: { tool_call_id: call.id, arguments: argumentDigest(call.arguments), outcome: directive?.action === 'block' ? 'blocked_by_hook' : result },
    });
    return { ...outcome, content };
  }

  tools(runner: GatedRunner): ToolRunner<WaitRequest> {
    return { ...runner, execute: (call, signal) => this.#execute(runner, call, signal) };
  }

  /** The audit entries of the calls whose results are stored next (recordResults, in the same statement). */
  takeAudit(): AuditEntry[] {
    return this.#pendingAudit.splice(0);
  }

  #contextFor(request: CompletionRequest): Promise<string | null> {
    // Once per turn run: the context joins the current user message of every model call of it.
    this.#llmContext ??= (async () => {
      const user = [...request.messages].reverse().find((message) => message.role === 'user');
      const fired = await this.#set.fire('pre_llm_call', this.#payload({ user_message: user?.content ?? '' }), { signal: request.signal });
      const audit = decisionAudit('pre_llm_call', fired.decisions, this.#where());
      if (audit.length > 0) await this.#scope.write((trx) => appendAudit(trx, audit));
      return fired.directive?.action === 'context' ? fired.directive.context : null;
    })();
    return this.#llmContext;
  }

  provider(provider: Provider): Provider {
    const complete = async (request: CompletionRequest) => {
      const context = this.#set.has('pre_llm_call') ? await this.#contextFor(request) : null;
      const result = await provider.complete(context === null ? request : { ...request, messages: withContext(request.messages, context) });
      if (this.#set.has('post_llm_call')) {
        const toolCalls = result.toolCalls.map((call) => call.name);
        await this.observe('post_llm_call', { model: result.model, content: result.content, tool_calls: toolCalls, finish_reason: result.finishReason });
      }
      return result;
    };
    return { name: provider.name, model: provider.model, complete };
  }
}

/**
 * The hook's context joins the current (last) user message of this request only: the stored
 * transcript and the system prompt are untouched, so the prompt's bytes (and its cache) stay the same.
 */
export function withContext(messages: readonly ChatMessage[], context: string): ChatMessage[] {
  const copy = [...messages];
  for (let i = copy.length - 1; i >= 0; i--) {
    const message = copy[i];
    if (message?.role === 'user') {
      copy[i] = { role: 'user', content: `${message.content}\n\n${context}` };
      break;
    }
  }
  return copy;
}
