import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import type { Config, Logger } from '@herald/core';
import { buildSystemPrompt, runToolLoop } from '@herald/agent';
import type { ChatMessage, LoopResult, ModelCallRecord, Provider, ToolRunner } from '@herald/agent';
import { appendMessages, fenced, isConnectionError, LeaseLostError, loadTranscript } from '@herald/session';
import type { Database, Db, Lease, PendingEvent, StoredMessage } from '@herald/session';
import type { ToolRegistry } from '@herald/tools';

export const NO_MODEL_REPLY =
  'Herald is running, but no model is configured, so I cannot answer yet. Set HERALD_MODEL ' +
  '(for example openai/gpt-4.1-mini or anthropic/claude-sonnet-4-5) and the provider key ' +
  '(OPENAI_API_KEY or ANTHROPIC_API_KEY; OPENAI_BASE_URL for Ollama, vLLM or OpenRouter), then restart Herald.';

export interface TurnDependencies {
  config: Config;
  db: Db;
  provider: Provider | null;
  registry: ToolRegistry;
  /** Tool names this worker offers; the same for every session until toolsets land. */
  toolNames: readonly string[];
  logger: Logger;
}

export interface TurnResult {
  eventIds: string[];
  outcome: LoopResult['outcome'] | 'no_model' | 'attempts_exhausted' | 'stopped' | 'error';
}

export const STOPPED_REPLY = 'Stopped. Send a new message when you are ready.';

export const INTERNAL_ERROR_REPLY =
  'Sorry, something went wrong on my side while answering. The error is logged; please try again.';

/** How the running turn is steered from outside: lease loss, shutdown, /stop and interrupts. */
export interface TurnControl {
  /** Aborts the turn: lease lost, shutdown deadline, or a person's /stop. */
  signal: AbortSignal;
  /** True when the abort came from /stop: the turn ends with a reply instead of being handed back. */
  stopRequested(): boolean;
  /** A fresh signal per model call, aborted when a message arrives in interrupt mode. */
  modelSignal(): AbortSignal;
}

function toChatMessages(transcript: StoredMessage[]): ChatMessage[] {
  return transcript.map((message): ChatMessage => {
    if (message.role === 'tool') {
      return { role: 'tool', content: message.content, tool_call_id: message.toolCallId ?? '', name: message.toolName };
    }
    if (message.role === 'assistant') {
      return message.toolCalls
        ? { role: 'assistant', content: message.content, tool_calls: message.toolCalls }
        : { role: 'assistant', content: message.content };
    }
    return { role: 'user', content: message.content };
  });
}

async function recordModelCall(
  trx: Transaction<Database>,
  sessionId: string,
  turnId: string,
  call: ModelCallRecord,
): Promise<void> {
  const usage = call.result.usage;
  await trx
    .insertInto('model_calls')
    .values({
      session_id: sessionId,
      turn_id: turnId,
      provider: call.provider,
      model: call.model,
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      cached_input_tokens: usage.cachedInputTokens,
      cache_write_tokens: usage.cacheWriteTokens,
      latency_ms: call.latencyMs,
      finish_reason: call.result.finishReason,
    })
    .execute();
}

/**
 * Runs one turn for the given open events under the lease: starts it (or resumes a crashed one),
 * runs the tool loop persisting each step, and ends it with the reply stored on the events.
 */
export async function runTurn(
  deps: TurnDependencies,
  lease: Lease,
  events: PendingEvent[],
  control: TurnControl,
): Promise<TurnResult> {
  const signal = control.signal;
  const { db, config, logger } = deps;
  const sessionId = lease.sessionId;
  const eventIds = events.map((event) => event.id);
  const write = <T>(fn: (trx: Transaction<Database>) => Promise<T>) => fenced(db, lease, fn);
  const session = await db
    .selectFrom('sessions')
    .innerJoin('profiles', 'profiles.id', 'sessions.profile_id')
    .select(['sessions.system_prompt', 'sessions.platform', 'sessions.profile_id', 'sessions.queue_mode', 'profiles.identity'])
    .where('sessions.id', '=', sessionId)
    .executeTakeFirstOrThrow();

  const resumedTurnId = events.find((event) => event.turnId !== null)?.turnId ?? null;
  const turnId = resumedTurnId ?? randomUUID();
  const modelLabel = config.model ? `${config.model.provider}/${config.model.model}` : 'none';
  let system = session.system_prompt;

  const started = await write(async (trx) => {
    if (resumedTurnId !== null) {
      const turn = await trx
        .updateTable('turns')
        .set((eb) => ({
          // The budget is for crashes: a run handed back cleanly (storage blip, shutdown) is not one.
          attempts: lease.tookOver ? eb('attempts', '+', 1) : eb.ref('attempts'),
          worker: lease.owner,
        }))
        .where('id', '=', turnId)
        .returning('attempts')
        .executeTakeFirstOrThrow();
      return { attempts: turn.attempts };
    }
    if (system === null) {
      system = buildSystemPrompt({
        identity: session.identity,
        toolGuidance: deps.toolNames.map((name) => deps.registry.get(name)?.guidance ?? '').filter((g) => g !== ''),
        platform: session.platform,
        model: modelLabel,
        now: new Date(),
      });
      await trx.updateTable('sessions').set({ system_prompt: system }).where('id', '=', sessionId).execute();
    }
    await trx.insertInto('turns').values({ id: turnId, session_id: sessionId, worker: lease.owner, error: null }).execute();
    await appendMessages(
      trx,
      sessionId,
      turnId,
      events.map((event) => ({ role: 'user' as const, content: event.text })),
    );
    await trx
      .updateTable('inbound_events')
      .set({ status: 'processing', turn_id: turnId })
      .where('id', 'in', eventIds)
      .execute();
    return { attempts: 1 };
  });

  const finish = async (text: string, outcome: TurnResult['outcome'], iterations: number, finalCall?: ModelCallRecord) => {
    const failed = outcome !== 'answered' && outcome !== 'iteration_limit';
    await write(async (trx) => {
      if (finalCall) await recordModelCall(trx, sessionId, turnId, finalCall);
      await appendMessages(trx, sessionId, turnId, [{ role: 'assistant', content: text }]);
      await trx
        .updateTable('turns')
        .set({ status: failed ? 'failed' : 'done', iterations, ended_at: new Date(), error: failed ? outcome : null })
        .where('id', '=', turnId)
        .execute();
      await trx
        .updateTable('inbound_events')
        .set({ status: 'done', reply_text: text, completed_at: sql`clock_timestamp()`, error: failed ? outcome : null })
        .where('id', 'in', eventIds)
        .execute();
    });
    return { eventIds, outcome };
  };

  if (started.attempts > config.turnMaxAttempts) {
    logger.warn({ sessionId, turnId, attempts: started.attempts }, 'turn attempt budget spent');
    return finish(
      `Sorry, I could not finish this: the turn was interrupted ${started.attempts - 1} times. Please send it again.`,
      'attempts_exhausted',
      0,
    );
  }
  const provider = deps.provider;
  if (provider === null) return finish(NO_MODEL_REPLY, 'no_model', 0);
  const systemPrompt: string | null = system;
  if (systemPrompt === null) throw new Error(`session ${sessionId} has a turn but no system prompt`);

  const history = toChatMessages(await loadTranscript(db, sessionId));
  const registry = deps.registry;
  const tools: ToolRunner = {
    definitions: registry.definitions(deps.toolNames),
    isReplaySafe: (name) => registry.get(name)?.replaySafe ?? false,
    execute: (call, toolSignal) =>
      registry.execute(call, deps.toolNames, {
        sessionId,
        profileId: session.profile_id,
        userId: events[events.length - 1]?.userId ?? '',
        db,
        signal: toolSignal,
        fencedWrite: write,
      }),
  };
  // Steer and interrupt: messages that arrive mid-turn join it at the next model boundary. The
  // status flip is conditional, so a message either joins this turn or stays for the next one.
  const injects = session.queue_mode === 'steer' || session.queue_mode === 'interrupt';
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
      for (const event of joined) {
        eventIds.push(event.id);
      }
      return joined.map((event): ChatMessage => ({ role: 'user', content: event.text }));
    });
  };
  let result: LoopResult;
  try {
    result = await runToolLoop({
      provider,
      modelSignal: () => control.modelSignal(),
      sessionId,
      system: systemPrompt,
      history,
      tools,
      maxIterations: config.maxIterations,
      retry: {
        maxRetries: config.providerMaxRetries,
        baseMs: config.providerRetryBaseMs,
        onRetry: (error, attempt, delayMs) =>
          logger.warn({ sessionId, kind: error.kind, status: error.status, attempt, delayMs }, 'model call failed; retrying'),
      },
      signal,
      hooks: {
        ...(injects ? { pollInjected } : {}),
        onToolStep: (step, call) =>
          write(async (trx) => {
            await recordModelCall(trx, sessionId, turnId, call);
            await appendMessages(trx, sessionId, turnId, [
              { role: 'assistant', content: step.content, toolCalls: step.tool_calls },
            ]);
            await trx.updateTable('turns').set((eb) => ({ iterations: eb('iterations', '+', 1) })).where('id', '=', turnId).execute();
          }),
        onToolResults: (results) =>
          write((trx) =>
            appendMessages(
              trx,
              sessionId,
              turnId,
              results.map((r) => ({ role: 'tool' as const, content: r.content, toolCallId: r.tool_call_id, toolName: r.name })),
            ),
          ),
      },
    });
  } catch (error) {
    if (LeaseLostError.isInstance(error)) throw error;
    if (control.stopRequested()) return finish(STOPPED_REPLY, 'stopped', 0);
    if (signal.aborted || isConnectionError(error)) throw error;
    // Our own failure (a bug, a tool that threw): answer instead of retrying the same crash forever.
    logger.error({ err: error, sessionId, turnId }, 'turn failed');
    return finish(INTERNAL_ERROR_REPLY, 'error', 0);
  }
  if (result.outcome === 'provider_error') logger.error({ sessionId, turnId }, 'model call failed after retries');
  return finish(result.text, result.outcome, result.iterations, result.finalCall);
}
