import type { ChatMessage, LoopResult } from '@herald/agent';
import { toChatMessages } from '@herald/agent';
import type { Db, QueueMode } from '@herald/db';
import { isConnectionError } from '@herald/db';
import { ineffectiveCompressions } from '@herald/session';
import { LeaseLostError } from '@herald/leases';
import { loadTranscript } from '@herald/transcript';
import type { Lease, LeasedSession, PendingEvent } from '@herald/leases';
import type { WaitRequest } from '@herald/tools';
import { MAX_INEFFECTIVE } from './compaction.ts';
import { withSessionTools } from './session-tools.ts';
import { compactMidTurn } from './turn-compaction.ts';
import { whileShown } from './turn-progress.ts';
import type { Ending, TurnContext, TurnControl, TurnDependencies, TurnResult } from './turn-context.ts';
import { endTurn, notOpened, parkTurn } from './turn-finish.ts';
import { readHistory } from './turn-history.ts';
import { openLoop } from './turn-loop.ts';
import type { OpenLoop } from './turn-loop.ts';
import { setUpTurn } from './turn-setup.ts';

export const NO_MODEL_REPLY =
  'Herald is running, but no model is configured, so I cannot answer yet. Set HERALD_MODEL ' +
  '(for example openai/gpt-4.1-mini or anthropic/claude-sonnet-4-5) and the provider key ' +
  '(OPENAI_API_KEY or ANTHROPIC_API_KEY; OPENAI_BASE_URL for Ollama, vLLM or OpenRouter), then restart Herald.';

export const STOPPED_REPLY = 'Stopped. Send a new message when you are ready.';

export const INTERNAL_ERROR_REPLY = 'Sorry, something went wrong on my side while answering. The error is logged; please try again.';

/** Known already when compactBeforeTurn read the session's size this turn; read once otherwise. */
async function compactionAllowed(db: Db, sessionId: string, ineffective: number | undefined): Promise<boolean> {
  if (ineffective !== undefined) return ineffective < MAX_INEFFECTIVE;
  return (await ineffectiveCompressions(db, sessionId)) < MAX_INEFFECTIVE;
}

/**
 * Runs one turn for the given open events under the lease, as a pipeline of named steps over a
 * readonly context (turn-context.ts): setUpTurn starts it (or resumes a crashed one), readHistory
 * and openLoop prepare the tool loop, runLoop calls the model and runs the tools persisting each
 * step, and endTurn stores the reply on the events (or parkTurn parks it on a person). Every write
 * is one call of a turn function that checks the lease token first.
 */
export async function runTurn(deps: TurnDependencies, lease: Lease, session: LeasedSession, queueMode: QueueMode, events: PendingEvent[], control: TurnControl): Promise<TurnResult> {
  // The session's own tools (its MCP servers') join the registry before anything is offered.
  const input = { deps: await withSessionTools(deps, lease, session), lease, session, queueMode, events, control };
  const started = await setUpTurn(input);
  if ('done' in started) return started.done;
  const { turn } = started;
  const result = await runSetUpTurn(turn);
  return turn.newPrompt === undefined ? result : { ...result, prompt: turn.newPrompt };
}

/** The steps after the set-up: a turn past its attempts or without a model ends at once, else the loop runs. */
async function runSetUpTurn(turn: TurnContext): Promise<TurnResult> {
  const { deps, lease, control, turnId, attempts, compaction } = turn;
  const { logger } = deps;
  const { sessionId } = lease;
  if (attempts > deps.config.roles.worker.turnMaxAttempts) {
    logger.warn({ sessionId, turnId, attempts }, 'turn attempt budget spent');
    const text = `Sorry, I could not finish this: the turn was interrupted ${attempts - 1} times. Please send it again.`;
    return endTurn(turn, notOpened(turn), { text, outcome: 'attempts_exhausted', iterations: 0, note: turn.note });
  }
  const { provider } = turn.shape;
  if (provider === null) return endTurn(turn, notOpened(turn), { text: NO_MODEL_REPLY, outcome: 'no_model', iterations: 0, note: turn.note });
  const { systemPrompt } = turn;
  if (systemPrompt === null) throw new Error(`session ${sessionId} has a turn but no system prompt`);

  const history = await readHistory(turn, provider);
  const loop = await openLoop(turn, { provider, systemPrompt });
  // Compaction mid-turn: once per turn, and not once compressing stopped helping (anti-thrash).
  const mayCompact = compaction !== undefined && !control.compacted.has(turnId) && (await compactionAllowed(deps.db, sessionId, turn.ineffective));
  const ran = await runLoop(turn, loop, history, mayCompact);
  // Compressed: the answer comes from the child session's turn; its draft starts there.
  if ('done' in ran) return (await loop.draft?.discard(), ran.done);
  if ('error' in ran) return endTurn(turn, loop, ran.error);
  const { result, note } = ran;
  if (result.outcome === 'waiting' && result.wait) return parkTurn(turn, loop, result.wait);
  if (result.outcome === 'provider_error') logger.error({ sessionId, turnId }, 'model call failed after retries');
  if (result.outcome === 'tool_errors') logger.warn({ sessionId, turnId }, 'turn ended after repeated invalid tool calls');
  return endTurn(turn, loop, { text: result.text, outcome: result.outcome, iterations: result.iterations, finalCall: result.finalCall, note });
}

type LoopOutcome =
  /** `note`: the turn's, or the notice of a compression in the middle of it that did not happen. */
  | { result: LoopResult<WaitRequest>; note: string | undefined }
  | { done: TurnResult }
  /** Answered with a reply instead (/stop, our own failure). */
  | { error: Ending };

/** Calls the model and runs the tools, and compresses when the context filled up; lease loss and shutdown propagate. */
async function runLoop(turn: TurnContext, loop: OpenLoop, history: ChatMessage[], mayCompact: boolean): Promise<LoopOutcome> {
  const { deps, lease, control, turnId, compaction } = turn;
  let note = turn.note;
  try {
    let result = await loop.run(history, mayCompact);
    if (result.outcome === 'context_full' && compaction) {
      const outcome = await whileShown(loop.compression, () => compactMidTurn(compaction, result.overflow === true));
      if (outcome.kind === 'compressed') {
        control.compacted.add(turnId);
        return { done: { eventIds: [...loop.eventIds], outcome: 'compressed', childSessionId: outcome.childId } };
      }
      // Not compressed (summariser unreachable, nothing to compact): go on from what is stored;
      // a prompt the provider refuses is then answered as the error it is.
      note = outcome.notice ?? note;
      result = await loop.run(toChatMessages(await loadTranscript(deps.db, lease.sessionId, deps.transcripts)), false);
    }
    return { result, note };
  } catch (error) {
    if (LeaseLostError.isInstance(error)) throw error;
    if (control.stopRequested()) return { error: { text: STOPPED_REPLY, outcome: 'stopped', iterations: 0, note } };
    if (control.signal.aborted || isConnectionError(error)) throw error;
    // Our own failure (a bug, a tool that threw): answer instead of retrying the same crash forever.
    deps.logger.error({ err: error, sessionId: lease.sessionId, turnId }, 'turn failed');
    return { error: { text: INTERNAL_ERROR_REPLY, outcome: 'error', iterations: 0, note } };
  }
}
