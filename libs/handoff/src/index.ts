/**
 * Moving a chat's work elsewhere and starting it over: /handoff to another platform's home chat
 * (request, claim, run, the message it carries), home chats (/sethome), and session resets (idle or
 * daily rules ending a session before a new message).
 */
export { homeChat, setHomeChat } from './home-chats.ts';
export { HANDOFF_NOT_YOURS_REPLY, SETHOME_OPERATORS_ONLY_REPLY } from './handoff-commands.ts';
export type { HomeChat } from './home-chats.ts';
export { claimHandoff, getHandoff, HANDOFF_STALE_SECONDS, HandoffRefused, latestHandoff, requestHandoff, runHandoff } from './handoff.ts';
export type { HandoffClaim, HandoffRequest, HandoffResult, HandoffView } from './handoff.ts';
export { handoffMessage } from './handoff-message.ts';
export type { WorkStanding } from './handoff-message.ts';
export { resetIfExpired, resetNotice } from './session-reset.ts';
export { homeChatsOf } from './home-chat-list.ts';
export { runHandoffCommand } from './handoff-commands.ts';
export { checkReset } from './session-reset.ts';
