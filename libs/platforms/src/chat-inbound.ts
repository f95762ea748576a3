import { qualifyUserId } from '@herald/core';
import type { ChatPlatform, Logger } from '@herald/core';
import { acceptInbound, BacklogFullError, chatTarget, LimitExceededError } from '@herald/session';
import { enqueueOutbound } from '@herald/delivery';
import type { Db } from '@herald/db';
import type { AcceptOptions, InboundMessage } from '@herald/session';
import { announceAccepted } from '@herald/queue';
import { withSpan } from '@herald/telemetry';
import type { NoticeBus, RunQueue } from '@herald/queue';
import { gatewayDispatch } from '@herald/hooks';
import { effectiveOperators, personKeyOf } from '@herald/people';
import { linkCommandOf, runLinkCommand } from './link-command.ts';
import type { Hooks } from '@herald/hooks';

/** A chat message from a chat platform, normalized; only messages addressed to the bot. */
export interface ChatInbound {
  platform: ChatPlatform;
  chatType: 'dm' | 'group';
  chatId: string;
  threadId?: string | undefined;
  userId: string;
  userName?: string | undefined;
  /** Also matched against the allowlist ('@name' entries). */
  userHandle?: string | undefined;
  /** Other spellings of the person the allowlist may use (Slack's bare user id beside team:user). */
  allowlistIds?: readonly string[] | undefined;
  text: string;
  /** Namespaced platform event id: a redelivery is the same event. */
  dedupeKey: string;
  platformMessageId: string;
  /** Extra delivery fields for the answer (a Discord interaction's token). */
  replyVia?: Record<string, string> | undefined;
}

export interface ChatInboundDependencies {
  db: Db;
  queue: RunQueue;
  /** Where /stop and interrupt notices go. */
  notices: NoticeBus;
  queuePrefix: string;
  /** The session backlog, operators and limits (acceptOptionsFrom). */
  accept: AcceptOptions;
  /** User ids or @handles; '*' allows everyone; empty allows no one. */
  allowedUsers: readonly string[];
  logger: Logger;
  profileId?: string;
  /** Lifecycle hooks: pre_gateway_dispatch may drop or rewrite a message before it is committed. */
  hooks?: Hooks | undefined;
}

export type ChatInboundOutcome = 'accepted' | 'duplicate' | 'refused' | 'backlog_full' | 'limited' | 'skipped';

export const REFUSAL_TEXT =
  'Sorry, I only answer people on this bot\'s allowlist. Ask whoever runs it to add your user id: ';

/** Refusals per person per platform: at most one per this window, across all replicas. */
const REFUSAL_WINDOW_MS = 3_600_000;

export function isAllowed(allowedUsers: readonly string[], userId: string, handle: string | undefined): boolean {
  if (allowedUsers.includes('*')) return true;
  if (allowedUsers.includes(userId)) return true;
  const name = handle?.toLowerCase();
  return name !== undefined && allowedUsers.some((entry) => entry.toLowerCase() === `@${name}`);
}

/** A platform message's way in, as one span (the trace's root) around the commit and the wake-up. */
export function handleChatInbound(deps: ChatInboundDependencies, message: ChatInbound): Promise<ChatInboundOutcome> {
  return withSpan('herald.ingress.accept', { 'herald.platform': message.platform }, () => acceptChatInbound(deps, message));
}

/**
 * Commits an addressed chat message to the inbox (the caller acknowledges the platform only after
 * this resolves), then wakes a worker. Someone not on the allowlist gets no model call and one
 * polite refusal per hour: the refusal's idempotency key names the hour, so replicas and
 * redeliveries collapse into one outbox row.
 */
async function acceptChatInbound(deps: ChatInboundDependencies, message: ChatInbound): Promise<ChatInboundOutcome> {
  const identity = qualifyUserId(message.platform, message.userId);
  const inbound: InboundMessage = {
    profileId: deps.profileId ?? 'main',
    platform: message.platform,
    chatType: message.chatType,
    chatId: message.chatId,
    threadId: message.threadId,
    userId: identity,
    userName: message.userName,
    text: message.text,
    dedupeKey: message.dedupeKey,
    platformMessageId: message.platformMessageId,
    replyVia: message.replyVia,
  };
  const allowed = [message.userId, ...(message.allowlistIds ?? [])].some((id) => isAllowed(deps.allowedUsers, id, message.userHandle));
  if (!allowed) {
    const window = Math.floor(Date.now() / REFUSAL_WINDOW_MS);
    await enqueueOutbound(deps.db, {
      idempotencyKey: `refusal:${message.platform}:${message.userId}:${window}`,
      platform: message.platform,
      target: chatTarget(inbound),
      text: `${REFUSAL_TEXT}${message.userId}`,
      source: 'refusal',
    });
    deps.logger.info({ platform: message.platform, userId: message.userId }, 'message from someone not on the allowlist');
    return 'refused';
  }
  const code = linkCommandOf(message.text);
  if (code !== undefined) {
    await runLinkCommand(deps.db, { code, identity, idempotencyKey: `link:${message.dedupeKey}`, platform: message.platform, target: chatTarget(inbound) });
    return 'accepted';
  }
  // A linked identity speaks as its person: memory, search, quotas and approvals read one id
  // (docs/decisions/2026-12-06-person-key.md).
  inbound.userId = await personKeyOf(deps.db, identity);
  const verdict = await gatewayDispatch(deps.hooks, deps.db, { ...inbound, profileId: inbound.profileId });
  if (verdict.kind === 'skip') return 'skipped';
  let accepted;
  try {
    const operators = await effectiveOperators(deps.db, deps.accept.operators ?? []);
    accepted = await acceptInbound(deps.db, { ...inbound, text: verdict.text }, { ...deps.accept, operators });
  } catch (error) {
    if (!(error instanceof BacklogFullError) && !(error instanceof LimitExceededError)) throw error;
    // Refused, never dropped silently: the person is told why in one line, through the outbox.
    const backlog = error instanceof BacklogFullError;
    await enqueueOutbound(deps.db, {
      idempotencyKey: `${backlog ? 'backlog' : 'limit'}:${message.dedupeKey}`,
      platform: message.platform,
      target: chatTarget(inbound),
      text: error.message,
      source: 'notice',
    });
    return backlog ? 'backlog_full' : 'limited';
  }
  await announceAccepted(deps, accepted);
  return accepted.duplicate ? 'duplicate' : 'accepted';
}
