import { qualifyUserId } from '@herald/core';
import type { Logger } from '@herald/core';
import { acceptInbound, BacklogFullError, chatTarget, LimitExceededError, wasAccepted } from '@herald/session';
import { takeMessageFiles } from '@herald/attachments';
import type { IncomingFile } from '@herald/attachments';
import { DEFAULT_ATTACHMENTS } from '@herald/core';
import { enqueueOutbound } from '@herald/delivery';
import type { Db } from '@herald/db';
import type { AcceptOptions, InboundMessage } from '@herald/session';
import { announceAccepted } from '@herald/queue';
import { withSpan } from '@herald/telemetry';
import type { NoticeBus, RunQueue } from '@herald/queue';
import { gatewayDispatch } from '@herald/hooks';
import type { Hooks } from '@herald/hooks';

/** A chat message from Telegram or Discord, normalized; only messages addressed to the bot. */
export interface ChatInbound {
  platform: 'telegram' | 'discord';
  chatType: 'dm' | 'group';
  chatId: string;
  threadId?: string | undefined;
  userId: string;
  userName?: string | undefined;
  /** Also matched against the allowlist ('@name' entries). */
  userHandle?: string | undefined;
  text: string;
  /** Namespaced platform event id: a redelivery is the same event. */
  dedupeKey: string;
  platformMessageId: string;
  /** Extra delivery fields for the answer (a Discord interaction's token). */
  replyVia?: Record<string, string> | undefined;
  /** Files the message carries (photos, documents, voice notes), not read yet: taken in only for people on the allowlist. */
  files?: readonly IncomingFile[] | undefined;
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
  const inbound: InboundMessage = {
    profileId: deps.profileId ?? 'main',
    platform: message.platform,
    chatType: message.chatType,
    chatId: message.chatId,
    threadId: message.threadId,
    userId: qualifyUserId(message.platform, message.userId),
    userName: message.userName,
    text: message.text,
    dedupeKey: message.dedupeKey,
    platformMessageId: message.platformMessageId,
    replyVia: message.replyVia,
  };
  if (!isAllowed(deps.allowedUsers, message.userId, message.userHandle)) {
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
  const withFiles = await takeFiles(deps, message, inbound);
  if (withFiles === undefined) return 'duplicate';
  inbound.text = withFiles.text;
  inbound.attachments = withFiles.attachments;
  const verdict = await gatewayDispatch(deps.hooks, deps.db, { ...inbound, profileId: inbound.profileId });
  if (verdict.kind === 'skip') return 'skipped';
  let accepted;
  try {
    accepted = await acceptInbound(deps.db, { ...inbound, text: verdict.text }, deps.accept);
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

/**
 * The message's files, downloaded once: a redelivered update whose message is in the inbox already
 * is a duplicate before anything is fetched. What the person must hear at once (a transcript, a
 * file refused) goes out through the outbox ahead of the answer.
 */
async function takeFiles(deps: ChatInboundDependencies, message: ChatInbound, inbound: InboundMessage): Promise<{ text: string; attachments: InboundMessage['attachments'] } | undefined> {
  const files = message.files ?? [];
  if (files.length === 0) return { text: message.text, attachments: undefined };
  if (await wasAccepted(deps.db, message.dedupeKey)) return undefined;
  const taken = await takeMessageFiles(deps.db, deps.accept.attachments ?? DEFAULT_ATTACHMENTS, message.text, files);
  for (const [index, text] of taken.notices.entries()) {
    await enqueueOutbound(deps.db, { idempotencyKey: `attachment:${message.dedupeKey}:${index}`, platform: message.platform, target: chatTarget(inbound), text, source: 'notice' });
  }
  return { text: taken.text, attachments: taken.attachments };
}
