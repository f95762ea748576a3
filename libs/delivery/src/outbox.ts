import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Database, InFlightPart, OutboxStatus, OutboxTable, StoredFile } from '@herald/db';
import { otherDraftIds } from './chat-drafts.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export interface OutboundRequest {
  /** One logical message: 'reply:<turn_id>', 'cron:<run_id>', ... A second enqueue is a no-op. */
  idempotencyKey: string;
  platform: string;
  /** {"chatId", "threadId"?, ...} for chats, {"url"} for webhooks: whatever the sender reads. */
  target: Record<string, string>;
  /** Markdown; the sender converts and splits it for its platform. */
  text: string;
  sessionId?: string | null;
  source: string;
  /** A file to send (its blob), with `text` as its caption: a photo or document message. */
  file?: StoredFile | undefined;
  /** Files inside the message itself (an e-mail's attachments); a chat gets file rows instead. */
  attachments?: readonly StoredFile[] | undefined;
  /** Stamped with the clock, not the transaction's start: leaves after the rows queued before it in its transaction. */
  afterEarlierRows?: boolean | undefined;
}

/**
 * Writes a message to the outbox; pass the transaction that commits what the message reports, so
 * both commit or neither does. Idempotent per key: `created` is false when the key already existed.
 */
export async function enqueueOutbound(trx: Executor, item: OutboundRequest): Promise<{ id: string; created: boolean }> {
  const inserted = await trx
    .insertInto('outbox')
    .values({
      idempotency_key: item.idempotencyKey,
      platform: item.platform,
      target: JSON.stringify(item.target),
      text: item.text,
      session_id: item.sessionId ?? null,
      source: item.source,
      last_error: null,
      receipt: null,
      claim_token: null,
      in_flight: null,
      file: item.file === undefined ? null : JSON.stringify(item.file),
      attachments: JSON.stringify(item.attachments ?? []),
      ...(item.afterEarlierRows === true ? { created_at: sql<Date>`clock_timestamp()` } : {}),
    })
    .onConflict((oc) => oc.column('idempotency_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) {
    await sql`SELECT pg_notify('herald_outbox', ${item.platform})`.execute(trx);
    return { id: inserted.id, created: true };
  }
  const existing = await trx.selectFrom('outbox').select('id').where('idempotency_key', '=', item.idempotencyKey).executeTakeFirstOrThrow();
  return { id: existing.id, created: false };
}

/** What the platform confirmed: its ids for every part of the message, in order. */
export interface DeliveryReceipt {
  messageIds: string[];
  [key: string]: unknown;
}

export interface OutboundItem {
  id: string;
  idempotencyKey: string;
  platform: string;
  target: Record<string, string>;
  text: string;
  sessionId: string | null;
  source: string;
  /** Attempts including this one. */
  attempts: number;
  /** A file to send with `text` as its caption (sendFile), or null for a text message. */
  file?: StoredFile | null | undefined;
  attachments?: readonly StoredFile[] | undefined;
}

/** A file as a sender gets it: what the outbox row names, with its bytes read from the blob. */
export interface OutboundFile extends StoredFile {
  bytes: Buffer;
}

/**
 * Durable progress of a multi-part send. A sender that sends more than one platform message (a
 * split reply) records each part, so a retry resumes after the parts already on the platform, and
 * marks each platform call before making it, so a crash or timeout mid-call is known to be
 * ambiguous on the next attempt instead of being blindly repeated.
 */
export interface DeliveryProgress {
  /** Platform message ids of the parts already delivered by earlier attempts. */
  readonly partsSent: readonly string[];
  /** Set when an earlier attempt died inside the platform call for this part. */
  readonly inFlight: InFlightPart | null;
  /** Commits "part n is being sent" before the platform call; returns the marker stored. */
  beginPart(part: number, anchor: string | null): Promise<InFlightPart>;
  /** Commits part n's platform message id and clears the in-flight mark. */
  partSent(part: number, messageId: string): Promise<void>;
  /** Clears the in-flight mark after reconciling that part was not delivered. */
  clearInFlight(): Promise<void>;
  /**
   * Message ids of the latest messages delivered to the same chat, newest rows first, then the
   * draft messages of other replies streaming there: bot messages that are not this row's.
   */
  recentChatMessageIds(): Promise<string[]>;
}

export interface OutboundDelivery extends OutboundItem {
  progress: DeliveryProgress;
  /**
   * Messages a running turn posted while its answer streamed (chat-drafts.ts), in order: the sender
   * edits them into the first parts of this text instead of sending those parts, and removes any
   * left over, so the chat ends with the committed text once. Empty for everything not streamed.
   */
  drafts: readonly string[];
  /** The row's `attachments` with their bytes, read from their blobs; absent or empty for most rows. */
  attachedFiles?: readonly OutboundFile[];
}

/**
 * A platform's calls for a streamed draft: one plain-text message posted, then edited as the text
 * grows. Errors are DeliveryErrors (a rate limit carries its retryAfterMs).
 */
export interface DraftCalls {
  /** Posts a draft message; `first` is the answer's first message (a group reply quotes the question). */
  post(target: Record<string, string>, text: string, first: boolean, signal: AbortSignal): Promise<string>;
  /** Replaces a draft message's text (an unchanged text is not an error); false when the message is gone. */
  edit(target: Record<string, string>, messageId: string, text: string, signal: AbortSignal): Promise<boolean>;
  /** Deletes a draft message; one already gone is not an error. */
  remove(target: Record<string, string>, messageId: string, signal: AbortSignal): Promise<void>;
  /** The longest text of one message. */
  readonly maxChars: number;
}

/**
 * One per platform. `send` resolves with the receipt once the platform confirmed every part, or
 * throws (a DeliveryError says whether and when to retry). Senders must honour `signal`.
 */
export interface OutboundSender {
  send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt>;
  /** Shows "typing..." in the chat for a few seconds; optional. */
  typing?(target: Record<string, string>, signal: AbortSignal): Promise<void>;
  /** Streamed drafts, when the platform can edit its messages; a sender without them is never streamed to. */
  readonly drafts?: DraftCalls;
  /**
   * Sends a file with the row's text as its caption (a photo or a document message); one over the
   * platform's size limit becomes a note saying so. A platform without it gets no file rows delivered.
   */
  sendFile?(item: OutboundDelivery, file: OutboundFile, signal: AbortSignal): Promise<DeliveryReceipt>;
}

const deliveryErrorMarker = Symbol.for('herald.delivery-error');

export interface DeliveryErrorOptions {
  /** False: retrying cannot help (bad target, forbidden, message rejected). */
  retryable: boolean;
  /** The platform asked us to wait this long (Telegram retry_after, Discord 429). */
  retryAfterMs?: number;
  /** The platform call may or may not have taken effect (timeout, connection lost mid-call). */
  ambiguous?: boolean;
  cause?: unknown;
}

/** A send that failed, classified by what the consumer should do next. */
export class DeliveryError extends Error {
  readonly [deliveryErrorMarker] = true;
  override readonly name = 'DeliveryError';
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly ambiguous: boolean;

  constructor(message: string, options: DeliveryErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.ambiguous = options.ambiguous ?? false;
  }

  static isInstance(value: unknown): value is DeliveryError {
    return typeof value === 'object' && value !== null && deliveryErrorMarker in value;
  }
}

/** The consumer lost its claim on a row (it expired and another consumer took it). */
export class ClaimLostError extends Error {
  override readonly name = 'ClaimLostError';
  constructor(id: string) {
    super(`claim on outbox row ${id} was lost`);
  }
}

export interface ClaimedRow extends OutboundItem {
  claimToken: string;
  partsSent: string[];
  inFlight: InFlightPart | null;
  /** The writing turn's traceparent, when it was traced. */
  traceParent: string | null;
}

/**
 * Claims due rows: pending ones whose time came, and 'sending' ones whose claim expired (their
 * consumer died). Per chat (target.chatId, all its threads) or URL only the oldest open row is
 * eligible, so a chat's messages go out in order even with many consumers, and every message the
 * bot sends into a chat after the last receipt belongs to the one row in flight there (what makes
 * an ambiguous Telegram send reconcilable).
 */
export async function claimOutbound(db: Kysely<Database>, options: { platforms: readonly string[]; limit: number; claimMs: number }): Promise<ClaimedRow[]> {
  if (options.platforms.length === 0) return [];
  const token = randomUUID();
  const result = await sql<{
    id: string;
    idempotency_key: string;
    platform: string;
    target: Record<string, string>;
    text: string;
    session_id: string | null;
    source: string;
    attempts: number;
    claim_token: string;
    parts_sent: string[];
    in_flight: InFlightPart | null;
    trace_parent: string | null;
    file: StoredFile | null;
    attachments: StoredFile[];
  }>`
    UPDATE outbox SET status = 'sending', attempts = attempts + 1, claim_token = ${token}::uuid,
                      claim_expires_at = now() + ${options.claimMs} * interval '1 millisecond'
    WHERE id IN (
      SELECT o.id FROM outbox o
      WHERE o.platform = ANY (${options.platforms as string[]}::text[])
        AND ((o.status = 'pending' AND o.next_attempt_at <= now())
             OR (o.status = 'sending' AND o.claim_expires_at < now()))
        AND NOT EXISTS (
          SELECT 1 FROM outbox older
          WHERE older.platform = o.platform
            AND (older.target ->> 'chatId' = o.target ->> 'chatId' OR older.target ->> 'url' = o.target ->> 'url')
            AND older.status IN ('pending', 'sending')
            AND (older.created_at, older.id) < (o.created_at, o.id))
      ORDER BY o.next_attempt_at
      LIMIT ${options.limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING id, idempotency_key, platform, target, text, session_id, source, attempts, claim_token,
              parts_sent, in_flight, trace_parent, file, attachments`.execute(db);
  return result.rows.map((row) => ({
    id: row.id,
    idempotencyKey: row.idempotency_key,
    platform: row.platform,
    target: row.target,
    text: row.text,
    sessionId: row.session_id,
    source: row.source,
    attempts: row.attempts,
    claimToken: row.claim_token,
    partsSent: row.parts_sent,
    inFlight: row.in_flight,
    traceParent: row.trace_parent,
    file: row.file,
    attachments: row.attachments,
  }));
}

async function updateClaimed(db: Kysely<Database>, row: ClaimedRow, values: Updateable<OutboxTable>): Promise<void> {
  const updated = await db.updateTable('outbox').set(values).where('id', '=', row.id).where('claim_token', '=', row.claimToken).where('status', '=', 'sending').executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) throw new ClaimLostError(row.id);
}

/** The progress handle a sender writes through; every write checks the claim is still ours. */
export function progressFor(db: Kysely<Database>, row: ClaimedRow): DeliveryProgress {
  const partsSent = [...row.partsSent];
  let inFlight = row.inFlight;
  return {
    get partsSent() {
      return partsSent;
    },
    get inFlight() {
      return inFlight;
    },
    async beginPart(part, anchor) {
      const mark: InFlightPart = { part, marker: randomUUID(), anchor };
      await updateClaimed(db, row, { in_flight: JSON.stringify(mark) });
      inFlight = mark;
      return mark;
    },
    async partSent(part, messageId) {
      if (part !== partsSent.length) throw new Error(`part ${part} recorded out of order (have ${partsSent.length})`);
      partsSent.push(messageId);
      await updateClaimed(db, row, { parts_sent: JSON.stringify(partsSent), in_flight: null });
      inFlight = null;
    },
    async clearInFlight() {
      await updateClaimed(db, row, { in_flight: null });
      inFlight = null;
    },
    async recentChatMessageIds() {
      const chatId = row.target.chatId;
      if (chatId === undefined) return [];
      const rows = await db
        .selectFrom('outbox')
        .select('parts_sent')
        .where('platform', '=', row.platform)
        .where(sql<string>`target ->> 'chatId'`, '=', chatId)
        .where('id', '!=', row.id)
        .where('status', 'in', ['delivered', 'failed'])
        .orderBy('created_at', 'desc')
        .limit(5)
        .execute();
      return [...rows.flatMap((r) => r.parts_sent), ...(await otherDraftIds(db, row.platform, chatId, row.idempotencyKey))];
    },
  };
}

export async function markDelivered(db: Kysely<Database>, row: ClaimedRow, receipt: DeliveryReceipt): Promise<void> {
  await updateClaimed(db, row, {
    status: 'delivered',
    receipt: JSON.stringify(receipt),
    delivered_at: new Date(),
    last_error: null,
    in_flight: null,
    claim_token: null,
    claim_expires_at: null,
  });
}

/** Hands the row back for another attempt at `retryAt`, or ends it as failed. */
export async function markAttemptFailed(db: Kysely<Database>, row: ClaimedRow, error: string, retryAt: Date | null): Promise<void> {
  await updateClaimed(db, row, {
    status: retryAt === null ? 'failed' : 'pending',
    next_attempt_at: retryAt ?? new Date(),
    last_error: error.slice(0, 2000),
    claim_token: null,
    claim_expires_at: null,
  });
}

export interface DeliveryView {
  id: string;
  idempotencyKey: string;
  platform: string;
  target: Record<string, string>;
  source: string;
  status: OutboxStatus;
  attempts: number;
  lastError: string | null;
  receipt: Record<string, unknown> | null;
  partsSent: string[];
  createdAt: Date;
  deliveredAt: Date | null;
  nextAttemptAt: Date;
}

/** A session's outbound messages, newest first: what reached the platform and what did not. */
export async function listDeliveries(db: Kysely<Database>, sessionId: string, limit = 50): Promise<DeliveryView[]> {
  const rows = await db.selectFrom('outbox').selectAll().where('session_id', '=', sessionId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((row) => ({
    id: row.id,
    idempotencyKey: row.idempotency_key,
    platform: row.platform,
    target: row.target,
    source: row.source,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    receipt: row.receipt,
    partsSent: row.parts_sent,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
    nextAttemptAt: row.next_attempt_at,
  }));
}
