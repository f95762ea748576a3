import { estimateRequestTokens, toChatMessages } from '@herald/agent';
import type { ChatMessage } from '@herald/agent';
import { parentSessionOf } from '@herald/session';
import { compressCommandOf } from '@herald/inbox';
import { answerCommand, takeNotice } from '@herald/lineage';
import { loadTranscriptState } from '@herald/transcript';
import type { Lease, PendingEvent } from '@herald/leases';
import { autoTrigger, compressSession, contextBudget, MAX_INEFFECTIVE, sessionSize, THRASHING_NOTICE } from './compaction.ts';
import type { CompactionDeps, CompactionOutcome } from './compaction.ts';
import { whileShown } from './turn-progress.ts';
import type { CompressionShown } from './turn-progress.ts';

// Where a turn meets compression: before it starts (a /compress command, or a session past the
// threshold or the message limit) and in the middle of it (the estimate before a call, or the
// provider's refusal of a prompt as too long, after which the turn goes on in the child).

export interface TurnCompaction {
  deps: CompactionDeps;
  lease: Lease;
  model: string;
  /** The session's stored prompt; null before its first turn (nothing to compress yet). */
  systemPrompt: string | null;
  /** The turn a compression in the middle of it counts for. */
  turnId: string;
  /** Whom a compression before the turn counts for: the author of its first message, as for the turn's own calls. */
  userId: string;
}

export type BeforeTurn =
  /** The session moved to a child; the events moved with it. */
  | { kind: 'compressed'; childId: string; answeredEventIds: string[] }
  /** A /compress that compressed nothing was answered; the turn is over. */
  | { kind: 'answered'; eventIds: string[] }
  /**
   * `ineffective`: the session's ineffective compressions, and `history`: its transcript before the
   * turn's messages, when read here (each saves the turn a round trip).
   */
  | { kind: 'go'; note: string | undefined; ineffective?: number; history?: ChatMessage[] };

export function compressedReply(summarised: number, focus: string | undefined): string {
  return (
    `Compressed: ${summarised} earlier messages are now a summary${focus ? ` (with extra weight on ${focus})` : ''}, ` + 'and this chat goes on in a new session. Earlier messages stay searchable.'
  );
}

/**
 * Runs a /compress command, or compresses a session that is past its limits, before a turn; the
 * turn's followers and its chat are shown the compression while it runs (`shown`).
 */
export async function compactBeforeTurn(tc: TurnCompaction, events: readonly PendingEvent[], shown?: CompressionShown): Promise<BeforeTurn> {
  const { deps, lease } = tc;
  const command = events.length === 1 && events[0] ? compressCommandOf(events[0].text) : undefined;
  if (command && events[0]) {
    const eventId = events[0].id;
    const state = await loadTranscriptState(deps.db, lease.sessionId, deps.transcripts);
    const size = sessionSize(state, tc.systemPrompt ?? '', toChatMessages(state.messages), [], deps.tools);
    const outcome = await whileShown(shown, () =>
      compressSession(deps, lease, tc.model, {
        trigger: 'command',
        focus: command.focus,
        firstCompaction: size.firstCompaction,
        answer: { eventId, text: (summarised) => compressedReply(summarised, command.focus) },
        spentFor: { turnId: null, userId: tc.userId },
      }),
    );
    if (outcome.kind === 'compressed') return { kind: 'compressed', childId: outcome.childId, answeredEventIds: [eventId] };
    await answerCommand(deps.db, lease, eventId, [`Nothing was compressed: ${outcome.reason}.`, outcome.notice].filter(Boolean).join('\n\n'));
    return { kind: 'answered', eventIds: [eventId] };
  }
  if (tc.systemPrompt === null) return { kind: 'go', note: undefined };
  const state = await loadTranscriptState(deps.db, lease.sessionId, deps.transcripts);
  const history = toChatMessages(state.messages);
  const size = sessionSize(
    state,
    tc.systemPrompt,
    history,
    events.map((e) => e.text),
    deps.tools,
  );
  const budget = contextBudget(deps.config, tc.model, deps.contextTokens);
  const trigger = autoTrigger(deps.config, budget, size);
  if (trigger === undefined) {
    // Compression stopped helping: say so once, and let the provider be the judge from here on.
    const thrashing = size.ineffective >= MAX_INEFFECTIVE && size.tokens >= budget.threshold;
    const note = thrashing && (await takeNotice(deps.db, lease, 'thrashing')) ? THRASHING_NOTICE : undefined;
    return { kind: 'go', note, ineffective: size.ineffective, history };
  }
  const outcome = await whileShown(shown, () => compressSession(deps, lease, tc.model, { trigger, firstCompaction: size.firstCompaction, spentFor: { turnId: null, userId: tc.userId } }));
  if (outcome.kind === 'compressed') return { kind: 'compressed', childId: outcome.childId, answeredEventIds: [] };
  return { kind: 'go', note: outcome.notice };
}

/** The estimate before each call of a running turn, on the prompt the loop is about to send. */
export function midTurnDue(tc: TurnCompaction, system: string): (messages: ChatMessage[]) => boolean {
  const budget = contextBudget(tc.deps.config, tc.model, tc.deps.contextTokens);
  return (messages) => estimateRequestTokens(system, messages, tc.deps.tools) >= budget.threshold;
}

/** Compresses in the middle of a turn: the running turn moves into the child with its events. */
export async function compactMidTurn(tc: TurnCompaction, overflow: boolean): Promise<CompactionOutcome> {
  const parent = await parentSessionOf(tc.deps.db, tc.lease.sessionId);
  return compressSession(tc.deps, tc.lease, tc.model, {
    trigger: overflow ? 'overflow' : 'estimate',
    firstCompaction: parent === null,
    spentFor: { turnId: tc.turnId },
  });
}
