import type { Kysely } from 'kysely';
import type { Logger } from '@herald/core';
import type { Database } from '@herald/db';
import { closedDirective, parseDirective } from './directives.ts';
import type { Directive } from './directives.ts';
import { DIRECTIVE_EVENTS } from './hook-spec.ts';
import type { HookEvent } from './hook-spec.ts';
import type { LoadedHook } from './hook-registry.ts';
import { sendHookDelivery } from './url-hooks.ts';

/** Runs a command hook's argv with the event JSON on stdin, in the tool sandbox (no platform secrets). */
export interface CommandRunner {
  run(argv: readonly string[], stdin: string, timeoutMs: number, signal: AbortSignal): Promise<{ exitCode: number | null; stdout: string }>;
}

/** What one hook did with one event: the audit trail and the logs keep these. */
export interface HookDecision {
  hook: string;
  kind: LoadedHook['kind'];
  outcome: 'directive' | 'none' | 'ignored' | 'failed' | 'queued';
  directive?: Directive | undefined;
  /** For 'failed': the timeout or error, and which way on_error sent it. */
  error?: string | undefined;
  onError?: 'open' | 'closed' | undefined;
}

export interface FireResult {
  directive: Directive | null;
  decisions: HookDecision[];
}

export interface FireOptions {
  /** Names what fired, so url deliveries of a repeated firing collapse (turn:call:event). */
  key?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface HookSetDeps {
  db: Kysely<Database>;
  logger: Logger;
  commands: CommandRunner | null;
}

class HookTimeout extends Error {}

async function withTimeout<T>(ms: number, signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const outer = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new HookTimeout(`timed out after ${ms} ms`));
      reject(new HookTimeout(`timed out after ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([run(outer), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The hooks that apply to one profile (file order, then the profile's own). fire() runs an event's
 * hooks in order and returns the first directive; a hook that throws or passes its timeout follows
 * its on_error, is logged, and never throws out of fire(). url hooks only observe: their delivery
 * is queued and fire() does not wait for the remote system.
 */
export class HookSet {
  readonly #hooks: readonly LoadedHook[];
  readonly #deps: HookSetDeps;

  constructor(hooks: readonly LoadedHook[], deps: HookSetDeps) {
    this.#hooks = hooks;
    this.#deps = deps;
  }

  has(event: HookEvent): boolean {
    return this.#hooks.some((hook) => hook.spec.event === event);
  }

  async fire(event: HookEvent, payload: Record<string, unknown>, options: FireOptions = {}): Promise<FireResult> {
    const decisions: HookDecision[] = [];
    let directive: Directive | null = null;
    const body = { event, ...payload };
    for (const hook of this.#hooks) {
      if (hook.spec.event !== event) continue;
      if (hook.kind === 'url') {
        decisions.push(await this.#queue(hook, event, body, options.key));
        continue;
      }
      // The first directive wins: later deciding hooks are not asked.
      if (directive !== null) continue;
      const decision = await this.#run(hook, event, body, options.signal);
      decisions.push(decision);
      if (decision.directive && DIRECTIVE_EVENTS.has(event)) directive = decision.directive;
    }
    return { directive, decisions };
  }

  async #run(hook: LoadedHook, event: HookEvent, body: Record<string, unknown>, signal: AbortSignal | undefined): Promise<HookDecision> {
    const base = { hook: hook.spec.name, kind: hook.kind };
    let answer: unknown;
    try {
      answer = await withTimeout(hook.spec.timeout_ms, signal, (hookSignal) => this.#answer(hook, event, body, hookSignal));
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      const why = error instanceof HookTimeout ? error.message : `failed: ${(error as Error)?.message ?? String(error)}`;
      const onError = hook.spec.on_error;
      this.#deps.logger.warn({ hook: hook.spec.name, event, onError, err: error }, `hook ${why}; on_error ${onError}`);
      const closed = onError === 'closed' ? closedDirective(event, hook.spec.name, why) : null;
      return { ...base, outcome: 'failed', error: why, onError, ...(closed ? { directive: closed } : {}) };
    }
    const { directive, ignored } = parseDirective(event, answer);
    if (ignored) this.#deps.logger.warn({ hook: hook.spec.name, event }, 'hook answered something that is not a directive of this event; ignored');
    if (directive) return { ...base, outcome: 'directive', directive };
    return { ...base, outcome: ignored ? 'ignored' : 'none' };
  }

  async #answer(hook: LoadedHook, event: HookEvent, body: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    if (hook.kind === 'module') {
      let answer: unknown;
      for (const handler of hook.handlers) {
        answer = await handler(body, { signal, event, hook: hook.spec.name });
        if (answer !== undefined && answer !== null) return answer;
      }
      return answer;
    }
    const spec = hook.spec as { command: string[]; timeout_ms: number };
    if (this.#deps.commands === null) throw new Error('command hooks need the tool sandbox, and this process has none');
    const result = await this.#deps.commands.run(spec.command, JSON.stringify(body), spec.timeout_ms, signal);
    if (result.exitCode !== 0) throw new Error(`command exited with ${result.exitCode ?? 'a signal'}`);
    const out = result.stdout.trim();
    if (out === '') return undefined;
    try {
      return JSON.parse(out) as unknown;
    } catch {
      throw new Error('command printed something that is not JSON');
    }
  }

  async #queue(hook: LoadedHook, event: HookEvent, body: Record<string, unknown>, key: string | undefined): Promise<HookDecision> {
    const base = { hook: hook.spec.name, kind: hook.kind };
    try {
      const url = (hook.spec as { url: string }).url;
      const json = JSON.stringify({ ...body, hook: hook.spec.name, sent_at: new Date().toISOString() });
      await sendHookDelivery(this.#deps.db, { hook: hook.spec.name, url, event, body: json }, key === undefined ? undefined : `${event}:${key}`);
      return { ...base, outcome: 'queued' };
    } catch (error) {
      this.#deps.logger.warn({ hook: hook.spec.name, event, err: error }, 'could not queue a url hook delivery; the event is not sent');
      return { ...base, outcome: 'failed', error: (error as Error).message, onError: 'open' };
    }
  }
}
