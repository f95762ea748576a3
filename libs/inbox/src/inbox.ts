import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { isChatPlatform, parseUserId, storedTarget } from '@herald/core';
import type { AttachmentsConfig, BudgetDefaults, Config, QuotaConfig, ResetRule } from '@herald/core';
import type { Database, ProfileCache } from '@herald/db';
import { recordQuotaRefusal } from '@herald/telemetry';
import { sessionKey, endSession } from '@herald/session';
import type { RouteAddress } from '@herald/session';
import { enqueueOutbound } from '@herald/delivery';
import { bareApprovalWord, parseCommand, runCommand } from './chat-commands.ts';
import type { Command, SessionControl } from './chat-commands.ts';
import { LimitExceededError, limitsArgument, countAttachmentBytes } from '@herald/limits';
import { withdrawWaits } from '@herald/waits';
import { checkReset } from '@herald/handoff';
import { storableValue } from '@herald/core';
import { attachToEvent } from '@herald/attachments';
import type { Attachment } from '@herald/attachments';
import { callAcceptMessage } from './accept-call.ts';
import type { AcceptCallRow } from './accept-call.ts';

export interface InboundMessage extends RouteAddress {
  userId: string;
  userName?: string | undefined;
  text: string;
  /** Platform event id or API idempotency key, already namespaced by the caller. */
  dedupeKey?: string | undefined;
  /** The platform's id of the message (Telegram message_id, Discord snowflake): replies quote it. */
  platformMessageId?: string | undefined;
  /** Extra delivery fields for the answer to this message (a Discord interaction's token). */
  replyVia?: Record<string, string> | undefined;
  /** Files it carried, already stored (takeMessageFiles); linked to the event in the commit that stores it. */
  attachments?: readonly Attachment[] | undefined;
  /**
   * Only into a session this sender started (a person's API chat): a chat somebody else started,
   * even a moment ago, is refused with NotYourChatError and nothing is written.
   */
  ownChat?: boolean | undefined;
}

export interface AcceptedEvent {
  eventId: string;
  sessionId: string;
  /** True when this event was accepted before (a retried webhook or repeated API call). */
  duplicate: boolean;
  /** True when the session needs a worker: the caller enqueues a wake-up for it. */
  needsWake: boolean;
  /** A command answered on arrival: its reply is already stored on the event. */
  answered?: boolean;
  /** The session's wake generation, read under the session row lock: names the wake-up job. */
  wakeGeneration: string;
  /** Set when the running turn must be told at once (a /stop, or a message in interrupt mode). */
  control?: SessionControl;
  /** Other sessions the command made runnable: a /new withdrew the ended session's pending requests. */
  alsoWake?: { sessionId: string; wakeGeneration: string }[];
}

async function routeToSession(trx: Transaction<Database>, key: string, message: InboundMessage, newSessionId: string): Promise<string> {
  const routed = await sql<{ session_id: string }>`
    SELECT herald_route_session(${key}, ${newSessionId}::uuid, ${message.profileId}, ${message.platform},
      ${message.chatType}, ${message.chatId}, ${message.threadId ?? null}::text, ${message.userId}) AS session_id`.execute(trx);
  const sessionId = routed.rows[0]?.session_id;
  if (!sessionId) throw new Error(`no session for ${key}`);
  return sessionId;
}

async function findByDedupeKey(db: Kysely<Database> | Transaction<Database>, dedupeKey: string) {
  return db
    .selectFrom('inbound_events')
    .innerJoin('sessions', 'sessions.id', 'inbound_events.session_id')
    .select(['inbound_events.id', 'inbound_events.session_id', 'inbound_events.status', 'inbound_events.user_id', 'sessions.wake_generation'])
    .where('inbound_events.dedupe_key', '=', dedupeKey)
    .executeTakeFirst();
}

/** Whether a message with this dedupe key is in the inbox already: its files need not be fetched again. */
export async function wasAccepted(db: Kysely<Database>, dedupeKey: string): Promise<boolean> {
  return (await findByDedupeKey(db, dedupeKey)) !== undefined;
}

function duplicateOf(row: NonNullable<Awaited<ReturnType<typeof findByDedupeKey>>>): AcceptedEvent {
  return {
    eventId: row.id,
    sessionId: row.session_id,
    duplicate: true,
    needsWake: row.status === 'pending' || row.status === 'processing',
    wakeGeneration: String(row.wake_generation),
  };
}

/** The session already has this many unanswered messages; the caller refuses the new one. */
export class BacklogFullError extends Error {
  override readonly name = 'BacklogFullError';
  readonly limit: number;
  constructor(limit: number) {
    super(`This chat already has ${limit} messages waiting for an answer; wait for the replies or send /stop, then try again.`);
    this.limit = limit;
  }
}

/** The chat is somebody else's session; the sender may not join it (see InboundMessage.ownChat). */
export class NotYourChatError extends Error {
  override readonly name = 'NotYourChatError';
  constructor() {
    super("this chat is another person's");
  }
}

export interface AcceptOptions {
  /** Most unanswered messages a session may hold; more are refused with BacklogFullError. */
  backlogLimit: number;
  /** Qualified ids who may answer any approval or question (HERALD_OPERATORS). */
  operators?: readonly string[] | undefined;
  /** Per-person and global limits; a message past one is refused with LimitExceededError. */
  limits?: QuotaConfig | undefined;
  /** The money budgets' defaults (HERALD_BUDGET_*); the budgets table's rows apply without them too. */
  budgets?: BudgetDefaults | undefined;
  /** Reset rules (HERALD_SESSION_RESET) tried after the profile's own; unset: no reset check at all. */
  resetRules?: readonly ResetRule[] | undefined;
  /** The process's profile cache, where the profile's own reset rules are read; without one, from Postgres. */
  profiles?: ProfileCache | undefined;
  /** How files that come with messages are taken in (size cap, transcription); the defaults without it. */
  attachments?: AttachmentsConfig | undefined;
}

/** What every edge accepts messages with: the session backlog, the operators, the limits and the reset rules. */
export function acceptOptionsFrom(config: Pick<Config, 'limits' | 'people' | 'sessionReset' | 'usage'> & Partial<Pick<Config, 'attachments'>>, profiles?: ProfileCache): AcceptOptions {
  return {
    attachments: config.attachments,
    backlogLimit: config.limits.sessionBacklog,
    operators: config.people.operators,
    limits: config.people.quotas,
    budgets: config.usage.budgets,
    resetRules: config.sessionReset.rules,
    profiles,
  };
}

/**
 * Commits an inbound message to the session inbox. The caller enqueues the wake-up only after this
 * resolves, so a message is never in Redis without being in Postgres.
 *
 * The session row is locked while the event is inserted: a worker bumps `wake_generation` under the
 * same lock before it reads the inbox, so either it sees this event or we see its new generation and
 * enqueue a job it has not consumed. That closes the last-drain/lease-release race.
 */
export async function acceptInbound(db: Kysely<Database>, message: InboundMessage, options: AcceptOptions = { backlogLimit: 50 }): Promise<AcceptedEvent> {
  // Every stored id names its platform (telegram:42 and discord:42 are two people); an edge that
  // forgot to qualify is a bug, not input to guess about.
  if (parseUserId(message.userId) === undefined) throw new Error(`user id '${message.userId}' is not qualified by platform`);
  // Platform text may hold NUL or unpaired surrogates, which Postgres refuses: the message is kept
  // without them (the HTTP API refuses them earlier, with a 400 naming the field).
  message = storableValue(message);
  const key = sessionKey(message);
  if (options.resetRules !== undefined) await checkReset(db, key, message, options.resetRules, options.profiles);
  let command = parseCommand(message.text);
  const bare = command === undefined ? bareApprovalWord(message.text) : undefined;
  if (bare !== undefined && (await hasPendingWait(db, key, ['approval']))) {
    command = bare === 'approve' ? { kind: 'approve', scope: 'once' } : { kind: 'deny', reason: undefined };
  }
  if (command === undefined) return acceptMessage(db, key, message, options);
  // Compressing needs the summariser and the session lease: the worker runs it, in order with the
  // session's other events, so it is queued like a message but kept out of any running turn.
  // With a question or approval pending the text would be taken as its answer: refused at once below.
  if (command.kind === 'compress' && !(await hasPendingWait(db, key, ['approval', 'clarify']))) {
    return markCommand(db, await acceptMessage(db, key, message, options));
  }
  return acceptCommand(db, key, message, command, options);
}

async function hasPendingWait(db: Kysely<Database>, key: string, kinds: ('approval' | 'clarify')[]): Promise<boolean> {
  const row = await db
    .selectFrom('session_routes')
    .innerJoin('tool_waits', 'tool_waits.session_id', 'session_routes.session_id')
    .select('tool_waits.id')
    .where('session_routes.session_key', '=', key)
    .where('tool_waits.status', '=', 'pending')
    .where('tool_waits.kind', 'in', kinds)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The command as an event, answered already; a concurrent twin with its dedupe key wins (DuplicateRace). */
async function storeCommandEvent(trx: Transaction<Database>, eventId: string, sessionId: string, message: InboundMessage, reply: string): Promise<void> {
  const inserted = await trx
    .insertInto('inbound_events')
    .values({
      id: eventId,
      session_id: sessionId,
      dedupe_key: message.dedupeKey ?? null,
      platform: message.platform,
      user_id: message.userId,
      user_name: message.userName ?? null,
      text: message.text,
      kind: 'command',
      status: 'done',
      turn_id: null,
      reply_text: reply,
      error: null,
      completed_at: new Date(),
      platform_message_id: message.platformMessageId ?? null,
    })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) return;
  // The same dedupe key committed concurrently; it already holds the truth.
  const seen = await findByDedupeKey(trx, message.dedupeKey ?? '');
  if (!seen) throw new Error('dedupe conflict without a stored event');
  if (message.ownChat === true && seen.user_id !== message.userId) throw new NotYourChatError();
  throw new DuplicateRace(duplicateOf(seen));
}

/** On a chat platform the answer goes out through the outbox, committed with the command's effect. */
async function answerInChat(trx: Transaction<Database>, eventId: string, sessionId: string, message: InboundMessage, reply: string): Promise<void> {
  if (!isChatPlatform(message.platform)) return;
  await enqueueOutbound(trx, {
    idempotencyKey: `command:${eventId}`,
    platform: message.platform,
    target: chatTarget(message),
    text: reply,
    sessionId,
    source: 'command',
  });
}

/**
 * Refuses a sender who may only use their own chats (InboundMessage.ownChat) a session another
 * started, under its row lock, as herald_accept_message does for a plain message: the ingress's
 * check before the accept cannot see a chat somebody is starting at the same moment.
 */
async function assertOwnChat(trx: Transaction<Database>, sessionId: string, message: InboundMessage): Promise<void> {
  if (message.ownChat !== true) return;
  const row = await trx.selectFrom('sessions').select('origin_user_id').where('id', '=', sessionId).forUpdate().executeTakeFirst();
  if (row?.origin_user_id !== message.userId) throw new NotYourChatError();
}

/**
 * A chat command: answered here, at once, in one transaction with its effect. Stored as an event
 * like any message so a retried delivery gets the same answer.
 */
async function acceptCommand(db: Kysely<Database>, key: string, message: InboundMessage, command: Command, options: AcceptOptions): Promise<AcceptedEvent> {
  const operators = options.operators ?? [];
  if (message.dedupeKey !== undefined) {
    const seen = await findByDedupeKey(db, message.dedupeKey);
    if (seen && message.ownChat === true && seen.user_id !== message.userId) throw new NotYourChatError();
    if (seen) return duplicateOf(seen);
  }
  return db
    .transaction()
    .execute(async (trx) => {
      let alsoWake: { sessionId: string; wakeGeneration: string }[] = [];
      if (command.kind === 'new') {
        // Point the route at a brand-new session; the old one stays, reachable by id, ended.
        const old = await trx.deleteFrom('session_routes').where('session_key', '=', key).returning('session_id').executeTakeFirst();
        if (old) await assertOwnChat(trx, old.session_id, message);
        if (old) await endSession(trx, old.session_id, 'new');
        // Whoever's request was parked there (another member's approval, say) must not hold their
        // turn, and their one allowed turn in flight, until it times out.
        if (old) alsoWake = await withdrawWaits(trx, old.session_id, message.userId);
      }
      const sessionId = await routeToSession(trx, key, message, randomUUID());
      const locked = await trx.updateTable('sessions').set({ updated_at: new Date() }).where('id', '=', sessionId).returning(['wake_generation']).executeTakeFirstOrThrow();
      await assertOwnChat(trx, sessionId, message);
      const outcome = await runCommand(trx, sessionId, message.userId, operators, command, options.budgets);
      const eventId = randomUUID();
      await storeCommandEvent(trx, eventId, sessionId, message, outcome.reply);
      await answerInChat(trx, eventId, sessionId, message, outcome.reply);
      return {
        eventId,
        sessionId,
        duplicate: false,
        needsWake: outcome.wake === true,
        answered: true,
        wakeGeneration: String(locked.wake_generation),
        ...(outcome.control === undefined ? {} : { control: outcome.control }),
        ...(alsoWake.length === 0 ? {} : { alsoWake }),
      };
    })
    .catch((error: unknown) => {
      // Rolled back our route/session work; report the event that won.
      if (error instanceof DuplicateRace) return error.accepted;
      throw error;
    });
}

type AcceptRow = AcceptCallRow;

/**
 * herald_accept_message, and with files the links to them and their bytes on the person's day in
 * the same transaction: a worker never sees the message without its files, and the attachment
 * allowance, checked in that call under the person's lock, counts them before the next message.
 */
async function acceptRow(db: Kysely<Database>, key: string, message: InboundMessage, options: AcceptOptions): Promise<AcceptRow | undefined> {
  const attachments = message.attachments ?? [];
  if (attachments.length === 0) return callAccept(db, key, message, options, 0);
  const bytes = attachments.reduce((sum, file) => sum + file.size, 0);
  return db.transaction().execute(async (trx) => {
    const row = await callAccept(trx, key, message, options, bytes);
    if (row?.outcome === 'accepted' && row.event_id !== null) {
      await attachToEvent(trx, row.event_id, attachments);
      await countAttachmentBytes(trx, message.userId, bytes);
    }
    return row;
  });
}

async function callAccept(db: Kysely<Database> | Transaction<Database>, key: string, message: InboundMessage, options: AcceptOptions, fileBytes: number): Promise<AcceptRow | undefined> {
  return callAcceptMessage(db, {
    sessionKey: key,
    profileId: message.profileId,
    platform: message.platform,
    chatType: message.chatType,
    chatId: message.chatId,
    threadId: message.threadId ?? null,
    userId: message.userId,
    userName: message.userName ?? null,
    text: message.text,
    dedupeKey: message.dedupeKey ?? null,
    backlogLimit: options.backlogLimit,
    operators: options.operators ?? [],
    limits: limitsArgument(options.limits, options.budgets, fileBytes),
    ownChat: message.ownChat === true,
  });
}

/** A plain message: one call of herald_accept_message (routing, lock, backlog, insert). */
async function acceptMessage(db: Kysely<Database>, key: string, message: InboundMessage, options: AcceptOptions): Promise<AcceptedEvent> {
  const row = await acceptRow(db, key, message, options);
  if (!row) throw new Error('herald_accept_message returned nothing');
  if (row.outcome === 'not_owner') throw new NotYourChatError();
  if (row.outcome === 'backlog_full') {
    recordQuotaRefusal('session_backlog');
    throw new BacklogFullError(options.backlogLimit);
  }
  if (row.outcome === 'limited') {
    const refusal = new LimitExceededError(row.limit_name ?? 'turns_per_minute', row.retry_after ?? 60);
    recordQuotaRefusal(refusal.limit);
    throw refusal;
  }
  if (row.outcome === 'accepted' && row.event_id !== null && message.platformMessageId !== undefined) {
    // Before the caller enqueues the wake-up, so the turn's reply finds it. Only the reply's
    // quoting and the reconciling of an ambiguous send use it; a crash right here costs neither.
    await db.updateTable('inbound_events').set({ platform_message_id: message.platformMessageId }).where('id', '=', row.event_id).execute();
  }
  const duplicate = row.outcome === 'duplicate';
  return {
    eventId: row.event_id ?? '',
    sessionId: row.session_id,
    duplicate,
    needsWake: !duplicate || row.status === 'pending' || row.status === 'processing',
    wakeGeneration: String(row.wake_generation),
    ...(!duplicate && row.queue_mode === 'interrupt' ? { control: 'interrupt' as const } : {}),
  };
}

async function markCommand(db: Kysely<Database>, accepted: AcceptedEvent): Promise<AcceptedEvent> {
  if (!accepted.duplicate) await db.updateTable('inbound_events').set({ kind: 'command' }).where('id', '=', accepted.eventId).execute();
  return accepted;
}

/** Where a chat platform delivers a reply to this message, in the stored form (@herald/core delivery-target.ts). */
export function chatTarget(message: InboundMessage): Record<string, string> {
  return storedTarget({ account: message.account, chatId: message.chatId, chatType: message.chatType, threadId: message.threadId, replyTo: message.platformMessageId, via: message.replyVia });
}

class DuplicateRace extends Error {
  readonly accepted: AcceptedEvent;
  constructor(accepted: AcceptedEvent) {
    super('duplicate event');
    this.accepted = accepted;
  }
}
