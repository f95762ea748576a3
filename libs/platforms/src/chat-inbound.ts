import { DEFAULT_ACCOUNT, qualifyUserId } from '@herald/core';
import { MAIN_PROFILE } from '@herald/profiles';
import type { BindingFacts } from '@herald/profiles';
import type { ChatPlatform, Logger } from '@herald/core';
import { acceptInbound, BacklogFullError, chatTarget, wasAccepted } from '@herald/inbox';
import { filesAdmission, LimitExceededError } from '@herald/limits';
import { takeMessageFiles } from '@herald/attachments';
import type { IncomingFile } from '@herald/attachments';
import { DEFAULT_ATTACHMENTS } from '@herald/core';
import { enqueueOutbound } from '@herald/delivery';
import type { Db } from '@herald/db';
import type { AcceptOptions, InboundMessage } from '@herald/inbox';
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
  /** The Discord server the message came from, matched by bindings' guild_id. */
  guildId?: string | undefined;
  /** The channel the message came in (a thread's parent), matched by bindings' channel_id; the chat when unset. */
  channelId?: string | undefined;
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
  /** The profile when no bindings are consulted (tests, one-profile tools); else `main` unless a binding says otherwise. */
  profileId?: string;
  /** The bot (platform account) the message came in on: replies leave through it. @default 'default' */
  account?: string | undefined;
  /** The bindings (@herald/profiles routeProfile, cached per process): which profile the message goes to. */
  routeProfile?: ((facts: BindingFacts) => Promise<string>) | undefined;
  /** Lifecycle hooks: pre_gateway_dispatch may drop or rewrite a message before it is committed. */
  hooks?: Hooks | undefined;
}

export type ChatInboundOutcome = 'accepted' | 'duplicate' | 'refused' | 'backlog_full' | 'limited' | 'skipped';

export const REFUSAL_TEXT = "Sorry, I only answer people on this bot's allowlist. Ask whoever runs it to add your user id: ";

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
/** The profile the bindings route a chat message to (the ingress's own profile, or main, without bindings). */
export async function routedProfile(deps: Pick<ChatInboundDependencies, 'account' | 'profileId' | 'routeProfile'>, message: ChatInbound): Promise<string> {
  if (deps.routeProfile === undefined) return deps.profileId ?? MAIN_PROFILE;
  const userId = qualifyUserId(message.platform, message.userId);
  const account = deps.account ?? DEFAULT_ACCOUNT;
  return deps.routeProfile({ platform: message.platform, account, chatId: message.chatId, chatType: message.chatType, guildId: message.guildId, channelId: message.channelId, userId });
}

/** An inbox message with its key, as inboundOf always makes it. */
type KeyedInbound = InboundMessage & { dedupeKey: string };

/**
 * The message as the inbox takes it: routed to its profile by the bindings, on its account. A
 * named account's chats are keyed apart (the same person on two bots has two conversations) and
 * its platform event ids, counted per bot, are namespaced by it.
 */
async function inboundOf(deps: ChatInboundDependencies, message: ChatInbound): Promise<KeyedInbound> {
  const account = deps.account ?? DEFAULT_ACCOUNT;
  const userId = qualifyUserId(message.platform, message.userId);
  const profileId = await routedProfile(deps, message);
  const named = account !== DEFAULT_ACCOUNT;
  return {
    profileId,
    platform: message.platform,
    ...(named ? { account } : {}),
    chatType: message.chatType,
    chatId: message.chatId,
    threadId: message.threadId,
    userId,
    userName: message.userName,
    text: message.text,
    dedupeKey: named ? `${account}/${message.dedupeKey}` : message.dedupeKey,
    platformMessageId: message.platformMessageId,
    replyVia: message.replyVia,
  };
}

async function acceptChatInbound(deps: ChatInboundDependencies, message: ChatInbound): Promise<ChatInboundOutcome> {
  const inbound = await inboundOf(deps, message);
  const allowed = [message.userId, ...(message.allowlistIds ?? [])].some((id) => isAllowed(deps.allowedUsers, id, message.userHandle));
  if (!allowed) {
    const window = Math.floor(Date.now() / REFUSAL_WINDOW_MS);
    await enqueueOutbound(deps.db, {
      idempotencyKey: `refusal:${message.platform}${inbound.account === undefined ? '' : `@${inbound.account}`}:${message.userId}:${window}`,
      platform: message.platform,
      target: chatTarget(inbound),
      text: `${REFUSAL_TEXT}${message.userId}`,
      source: 'refusal',
    });
    deps.logger.info({ platform: message.platform, userId: message.userId }, 'message from someone not on the allowlist');
    return 'refused';
  }
  const identity = inbound.userId;
  const code = linkCommandOf(message.text);
  if (code !== undefined) {
    await runLinkCommand(deps.db, { code, identity, idempotencyKey: `link:${inbound.dedupeKey}`, platform: message.platform, target: chatTarget(inbound) });
    return 'accepted';
  }
  // A linked identity speaks as its person: memory, search, quotas and approvals read one id
  // (docs/decisions/2026-12-06-person-key.md).
  inbound.userId = await personKeyOf(deps.db, identity, deps.accept.profiles);
  let withFiles;
  try {
    withFiles = await takeFiles(deps, message, inbound);
  } catch (error) {
    if (!(error instanceof LimitExceededError)) throw error;
    return tellRefused(deps, message, inbound, error);
  }
  if (withFiles === undefined) return 'duplicate';
  inbound.text = withFiles.text;
  inbound.attachments = withFiles.attachments;
  const verdict = await gatewayDispatch(deps.hooks, deps.db, { ...inbound, profileId: inbound.profileId });
  if (verdict.kind === 'skip') return 'skipped';
  let accepted;
  try {
    const operators = await effectiveOperators(deps.db, deps.accept.operators ?? []);
    accepted = await acceptInbound(deps.db, { ...inbound, text: verdict.text }, { ...deps.accept, operators });
  } catch (error) {
    if (!(error instanceof BacklogFullError) && !(error instanceof LimitExceededError)) throw error;
    return tellRefused(deps, message, inbound, error);
  }
  await announceAccepted(deps, accepted);
  return accepted.duplicate ? 'duplicate' : 'accepted';
}

/** Refused, never dropped silently: the person is told why in one line, through the outbox. */
async function tellRefused(deps: ChatInboundDependencies, message: ChatInbound, inbound: KeyedInbound, error: BacklogFullError | LimitExceededError): Promise<ChatInboundOutcome> {
  const backlog = error instanceof BacklogFullError;
  await enqueueOutbound(deps.db, {
    idempotencyKey: `${backlog ? 'backlog' : 'limit'}:${inbound.dedupeKey}`,
    platform: message.platform,
    target: chatTarget(inbound),
    text: error.message,
    source: 'notice',
  });
  return backlog ? 'backlog_full' : 'limited';
}

/**
 * The message's files, downloaded once: a redelivered update whose message is in the inbox already
 * is a duplicate before anything is fetched. What the person must hear at once (a transcript, a
 * file refused) goes out through the outbox ahead of the answer. Past the person's daily
 * attachment allowance it throws LimitExceededError, nothing stored.
 */
async function takeFiles(deps: ChatInboundDependencies, message: ChatInbound, inbound: KeyedInbound): Promise<{ text: string; attachments: InboundMessage['attachments'] } | undefined> {
  const files = message.files ?? [];
  if (files.length === 0) return { text: message.text, attachments: undefined };
  // The inbox's key (a named account's is namespaced by it), so two bots seeing one message each take it.
  if (await wasAccepted(deps.db, inbound.dedupeKey)) return undefined;
  const sender = { userId: inbound.userId, profileId: inbound.profileId, platform: message.platform, chatId: message.chatId };
  const admit = filesAdmission(deps.db, sender, deps.accept.limits);
  const taken = await takeMessageFiles(deps.db, deps.accept.attachments ?? DEFAULT_ATTACHMENTS, message.text, files, { admit });
  for (const [index, text] of taken.notices.entries()) {
    await enqueueOutbound(deps.db, { idempotencyKey: `attachment:${inbound.dedupeKey}:${index}`, platform: message.platform, target: chatTarget(inbound), text, source: 'notice' });
  }
  return { text: taken.text, attachments: taken.attachments };
}
