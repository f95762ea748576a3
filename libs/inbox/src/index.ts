/**
 * A message into a session and the turns that answer it: acceptInbound (dedupe, quotas, resets,
 * chat commands, attachments), the chat commands themselves, the turn records (start, resume, step,
 * finish, suspend), internal events, the people seen in chats and the inbox depth for autoscaling.
 */
export type { AcceptedEvent, AcceptOptions, InboundMessage } from './inbox.ts';
export { acceptInbound, acceptOptionsFrom, chatTarget, BacklogFullError, NotYourChatError, wasAccepted } from './inbox.ts';
export { callAcceptMessage } from './accept-call.ts';
export type { AcceptCall, AcceptCallRow } from './accept-call.ts';
export { suggestPeople } from './people-seen.ts';
export type { PersonSeen } from './people-seen.ts';
export type { SessionControl } from './chat-commands.ts';
export { parseCommand, compressCommandOf, NEW_SESSION_REPLY, COMPRESS_WHILE_WAITING_REPLY, QUEUE_MODES, CHAT_COMMANDS, HELP_REPLY } from './chat-commands.ts';
export { startTurn, resumeTurn, recordStep, recordResults, finishTurn, suspendTurn } from './turn-store.ts';
export type { FinishedTurn, ModelCallRow, NewWait, TurnCompletionCounts, TurnEnd, WaitButton } from './turn-store.ts';
export { recordModelCall } from './model-calls.ts';
export type { SideModelCall } from './model-calls.ts';
export { INBOX_QUEUE, inboxDepth } from './inbox-depth.ts';
export { postInternalEvent } from './internal-events.ts';
export type { InternalEvent } from './internal-events.ts';
