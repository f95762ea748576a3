import type { EventWaiting } from '@herald/session';
import type { WaitView } from '@herald/waits';

/** What a person sees of a parked turn: the question or the call to approve, and until when. */
export function waitingView(waiting: EventWaiting) {
  return {
    id: waiting.id,
    kind: waiting.kind,
    tool: waiting.tool,
    prompt: waiting.prompt,
    choices: waiting.choices,
    expires_at: waiting.expiresAt.toISOString(),
    how_to_answer:
      waiting.kind === 'approval'
        ? `POST /v1/waits/${waiting.id} {"decision":"approve"|"deny"}, or send /approve, /approve session or /deny in the chat`
        : `POST /v1/waits/${waiting.id} {"answer":"..."}, or send the answer as the next message in the chat`,
  };
}

export function waitView(wait: WaitView) {
  return {
    id: wait.id,
    session_id: wait.sessionId,
    turn_id: wait.turnId,
    kind: wait.kind,
    tool: wait.toolName,
    arguments: wait.arguments,
    prompt: wait.prompt,
    choices: wait.choices,
    status: wait.status,
    answer: wait.answer,
    answered_by: wait.answeredBy,
    created_at: wait.createdAt.toISOString(),
    expires_at: wait.expiresAt.toISOString(),
    resolved_at: wait.resolvedAt?.toISOString() ?? null,
  };
}
