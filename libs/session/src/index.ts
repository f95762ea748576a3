export { sessionKey } from './session-key.ts';
export { chatRouteExists } from './chat-routes.ts';
export type { RouteAddress } from './session-key.ts';
export type { AcceptedEvent, AcceptOptions, InboundMessage } from './inbox.ts';
export { acceptInbound, acceptOptionsFrom, chatTarget, BacklogFullError, wasAccepted } from './inbox.ts';
export { callAcceptMessage } from './accept-call.ts';
export type { AcceptCall, AcceptCallRow } from './accept-call.ts';
export type { Inbox, NextInbox, PendingEvent } from './open-inbox.ts';
export { openInbox } from './open-inbox.ts';
export { eventUsage, getEvent, listOpenEvents } from './event-view.ts';
export type { EventView, EventWaiting, OpenEvent } from './event-view.ts';
export { suggestPeople } from './people-seen.ts';
export type { PersonSeen } from './people-seen.ts';
export { enqueueSessionFile } from './session-files.ts';
export type { SessionControl } from './chat-commands.ts';
export {
  parseCommand,
  compressCommandOf,
  NEW_SESSION_REPLY,
  COMPRESS_WHILE_WAITING_REPLY,
  QUEUE_MODES,
  CHAT_COMMANDS,
  HELP_REPLY,
} from './chat-commands.ts';
export { LimitExceededError, limitPassed, limitsArgument, tokenLimitsArgument } from './limit-refusal.ts';
export type { BudgetRef, LimitName } from './limit-refusal.ts';
export { filesAdmission } from './attachment-allowance.ts';
export type { FilesAdmission, FilesSender } from './attachment-allowance.ts';
export { BUDGET_WARNING_SHARE, budgetPassed, budgetStates, checkBudgets, formatUsd, listBudgets, removeBudget, setBudget, turnWarnings, warnBudgets } from './budgets.ts';
export type { BudgetRow, BudgetState, WarningContext } from './budgets.ts';
export { USAGE_GROUPS, usageReply, usageReport, utcDayStart, utcMonthStart } from './usage-report.ts';
export type { UsageGroup, UsageQuery, UsageRow, UsageTotals } from './usage-report.ts';
export { claimLease, renewLease, releaseLease, fenced, LeaseLostError } from './leases.ts';
export type { Lease, LeasedSession } from './leases.ts';
export { appendMessages, loadTranscript, loadTranscriptState } from './transcript.ts';
export { TranscriptCache } from './transcript-cache.ts';
export type { NewMessage, StoredMessage, TranscriptState } from './transcript.ts';
export { loadTranscriptPage } from './transcript-page.ts';
export type { PageAnchor, TranscriptPage } from './transcript-page.ts';
export { findStrandedSessions } from './stranded.ts';
export type { StrandedSession } from './stranded.ts';
export { startTurn, resumeTurn, recordStep, finishTurn, suspendTurn } from './turn-store.ts';
export type { FinishedTurn, ModelCallRow, NewWait, TurnCompletionCounts, TurnEnd, WaitButton } from './turn-store.ts';
export { recordModelCall } from './model-calls.ts';
export type { SideModelCall } from './model-calls.ts';
export {
  expireWaits,
  findWait,
  getWait,
  isPatternApproved,
  listWaits,
  mayAnswerWait,
  NOT_YOURS_REPLY,
  pendingWaitOf,
  recordRefusal,
  resolveWait,
  takeAnsweredWaits,
  withdrawWaits,
  WITHDRAWN_BY_NEW,
} from './tool-waits.ts';
export type { WaitView } from './tool-waits.ts';
export { acquirePlatformLease, renewPlatformLease, releasePlatformLease } from './platform-leases.ts';
export { INBOX_QUEUE, inboxDepth } from './inbox-depth.ts';
export {
  answerCommand,
  childTitle,
  claimCompression,
  commitCompaction,
  recordCompressionUnchanged,
  sessionLineage,
  takeNotice,
} from './lineage.ts';
export type { CompactionCommit, CompressionNotice, LineageEntry } from './lineage.ts';
export { listSessions } from './session-list.ts';
export type { SessionFilter, SessionSummary } from './session-list.ts';
export { countDeadLetters, failureReason, isDeadLetter, listDeadLetters, recordFailure } from './dead-letters.ts';
export type { DeadLetterView, FailureRecord, FailureStrike } from './dead-letters.ts';
export { endSession, fireNextSessionEnd } from './session-end.ts';
export type { SessionEnd } from './session-end.ts';
export { homeChat, setHomeChat } from './home-chats.ts';
export { HANDOFF_NOT_YOURS_REPLY, SETHOME_OPERATORS_ONLY_REPLY } from './handoff-commands.ts';
export type { HomeChat } from './home-chats.ts';
export { claimHandoff, getHandoff, HANDOFF_STALE_SECONDS, HandoffRefused, latestHandoff, requestHandoff, runHandoff } from './handoff.ts';
export type { HandoffClaim, HandoffRequest, HandoffResult, HandoffView } from './handoff.ts';
export { handoffMessage } from './handoff-message.ts';
export type { WorkStanding } from './handoff-message.ts';
export { resetIfExpired, resetNotice } from './session-reset.ts';
export {
  cancelRuns,
  createChildRuns,
  getRun,
  listRuns,
  openBackgroundRuns,
  runOfChildSession,
  runsOfCall,
  SUBAGENT_PLATFORM,
} from './subagent-runs.ts';
export type { ChildRunsInput, CreatedChild, NewChildRun, RunFilter, SubagentRun } from './subagent-runs.ts';
export { postInternalEvent } from './internal-events.ts';
export type { InternalEvent } from './internal-events.ts';
export { replyAnchorOf } from './reply-anchor.ts';
export type { ReplyAnchor } from './reply-anchor.ts';
export { sessionResourceOwner } from './ownership.ts';
export type { SessionResourceKind, SessionResourceOwner } from './ownership.ts';
export { turnStartedRuns } from './turn-runs.ts';
export { delegatingRoot, ineffectiveCompressions, parentSessionOf, sessionExists, sessionRecord, setQueueMode, wakeGenerations } from './session-record.ts';
export type { SessionRecord } from './session-record.ts';
export { isOnlyTurnOfSession } from './turn-order.ts';
export { claimForTurn, failOpenWork, oldestOpenEvent, pendingMessages } from './open-events.ts';
export { homeChatsOf } from './home-chat-list.ts';
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
