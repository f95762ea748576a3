/**
 * The session record: its route key and routes, ending a session (the one way, with on_session_end),
 * the read views (session list, event view, reply anchors, who owns a session's resources), dead
 * letters and session files. The rest of what libs/session held has a lib of its own: leases and
 * the open inbox (@herald/leases), the transcript (@herald/transcript), accepting messages and the
 * turns (@herald/inbox), compression (@herald/lineage), handoff and resets (@herald/handoff), waits
 * and approvals (@herald/waits), budgets and usage (@herald/limits), subagent runs (@herald/subagents).
 */
export { sessionKey } from './session-key.ts';
export { chatRouteExists, chatSessionId } from './chat-routes.ts';
export type { RouteAddress } from './session-key.ts';
export { eventUsage, getEvent, listOpenEvents } from './event-view.ts';
export type { EventView, EventWaiting, OpenEvent } from './event-view.ts';
export { enqueueSessionFile } from './session-files.ts';
export { listSessions } from './session-list.ts';
export type { SessionFilter, SessionSummary } from './session-list.ts';
export { countDeadLetters, failureReason, isDeadLetter, listDeadLetters, recordFailure } from './dead-letters.ts';
export type { DeadLetterView, FailureRecord, FailureStrike } from './dead-letters.ts';
export { endSession, fireNextSessionEnd } from './session-end.ts';
export type { SessionEnd } from './session-end.ts';
export { replyAnchorOf } from './reply-anchor.ts';
export type { ReplyAnchor } from './reply-anchor.ts';
export { sessionResourceOwner } from './ownership.ts';
export type { SessionResourceKind, SessionResourceOwner } from './ownership.ts';
export { turnStartedRuns } from './turn-runs.ts';
export { delegatingRoot, ineffectiveCompressions, parentSessionOf, sessionExists, sessionRecord, setQueueMode, wakeGenerations } from './session-record.ts';
export type { SessionRecord } from './session-record.ts';
export { isOnlyTurnOfSession } from './turn-order.ts';
export { claimForTurn, failOpenWork, oldestOpenEvent, pendingMessages } from './open-events.ts';
export { messagesForExport, sessionsForExport } from './session-export.ts';
export type { ExportedMessage, ExportedSession } from './session-export.ts';
export { saveSessionTodos, sessionTodos } from './session-todos.ts';
export type { StoredTodos } from './session-todos.ts';
export { sessionChat } from './session-chat.ts';
export type { SessionChat } from './session-chat.ts';
export { firstReply, sessionModelUsage, toolExchanges } from './child-report.ts';
export { pastMessagesMatching } from './past-messages.ts';
export type { PastMessagesQuery } from './past-messages.ts';
export { listInboxJobs } from './inbox-jobs.ts';
export { importSessions, importedSessionStates, IMPORTED_SESSION_COLUMNS } from './session-import.ts';
export type { ImportedSessionState } from './session-import.ts';
