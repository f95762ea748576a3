import { toChatMessages, withRecall } from '@herald/agent';
import type { ChatMessage, Provider } from '@herald/agent';
import { loadTranscript } from '@herald/transcript';
import { withAttachments } from './turn-attachments.ts';
import type { TurnContext } from './turn-context.ts';

/**
 * What the model is called with: the stored transcript, this turn's files in place, and recalled
 * snippets next to the user message when recall is on and the turn's shape takes them.
 */
export async function readHistory(turn: TurnContext, provider: Provider): Promise<ChatMessage[]> {
  const { deps, session, events } = turn;
  const { sessionId } = turn.lease;
  // herald_start_turn appended the events as user messages, in this order, after what was read.
  const stored = turn.history
    ? [...turn.history, ...events.map((event): ChatMessage => ({ role: 'user', content: event.text }))]
    : toChatMessages(await loadTranscript(deps.db, sessionId, deps.transcripts));
  const history = await withAttachments(deps, turn.shape.workspace, provider, events, stored);
  if (deps.recall === null || !turn.shape.recall) return history;
  const last = events[events.length - 1];
  const snippets = await deps.recall.recall({ profileId: session.profileId, userId: last?.userId ?? '', sessionId, text: events.map((e) => e.text).join('\n') }).catch((error: unknown) => {
    deps.logger.warn({ err: error, sessionId }, 'recall failed; answering without it');
    return [];
  });
  return withRecall(history, snippets);
}
