import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.ts';
import { sessionKey } from './session-key.ts';
import type { RouteAddress } from './session-key.ts';

export interface InboundMessage extends RouteAddress {
  userId: string;
  userName?: string | undefined;
  text: string;
  /** Platform event id or API idempotency key, already namespaced by the caller. */
  dedupeKey?: string | undefined;
}

export interface AcceptedEvent {
  eventId: string;
  sessionId: string;
  /** True when this event was accepted before (a retried webhook or repeated API call). */
  duplicate: boolean;
  /** True when the event still needs a worker: the caller enqueues a wake-up for it. */
  needsWake: boolean;
  /** The session's wake generation, read under the session row lock: names the wake-up job. */
  wakeGeneration: string;
}

export const NEW_SESSION_REPLY = 'Started a new session. Earlier messages in this chat are no longer in context.';

async function createSession(trx: Transaction<Database>, key: string, message: InboundMessage): Promise<string> {
  const id = randomUUID();
  await trx
    .insertInto('sessions')
    .values({
      id,
      profile_id: message.profileId,
      session_key: key,
      platform: message.platform,
      chat_type: message.chatType,
      chat_id: message.chatId,
      thread_id: message.threadId ?? null,
      origin_user_id: message.userId,
      system_prompt: null,
      parent_session_id: null,
    })
    .execute();
  return id;
}

async function routeToSession(trx: Transaction<Database>, key: string, message: InboundMessage): Promise<string> {
  const existing = await trx
    .selectFrom('session_routes')
    .select('session_id')
    .where('session_key', '=', key)
    .executeTakeFirst();
  if (existing) return existing.session_id;
  const created = await createSession(trx, key, message);
  const inserted = await trx
    .insertInto('session_routes')
    .values({ session_key: key, session_id: created })
    .onConflict((oc) => oc.column('session_key').doNothing())
    .returning('session_id')
    .executeTakeFirst();
  if (inserted) return inserted.session_id;
  // A concurrent first message for the same chat won the race: use its session, drop ours.
  await trx.deleteFrom('sessions').where('id', '=', created).execute();
  const winner = await trx
    .selectFrom('session_routes')
    .select('session_id')
    .where('session_key', '=', key)
    .executeTakeFirstOrThrow();
  return winner.session_id;
}

async function findByDedupeKey(db: Kysely<Database> | Transaction<Database>, dedupeKey: string) {
  return db
    .selectFrom('inbound_events')
    .innerJoin('sessions', 'sessions.id', 'inbound_events.session_id')
    .select(['inbound_events.id', 'inbound_events.session_id', 'inbound_events.status', 'sessions.wake_generation'])
    .where('inbound_events.dedupe_key', '=', dedupeKey)
    .executeTakeFirst();
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

/**
 * Commits an inbound message to the session inbox. The caller enqueues the wake-up only after this
 * resolves, so a message is never in Redis without being in Postgres.
 *
 * The session row is locked while the event is inserted: a worker bumps `wake_generation` under the
 * same lock before it reads the inbox, so either it sees this event or we see its new generation and
 * enqueue a job it has not consumed. That closes the last-drain/lease-release race.
 */
export async function acceptInbound(db: Kysely<Database>, message: InboundMessage): Promise<AcceptedEvent> {
  if (message.dedupeKey !== undefined) {
    const seen = await findByDedupeKey(db, message.dedupeKey);
    if (seen) return duplicateOf(seen);
  }
  const key = sessionKey(message);
  const isNewCommand = message.text.trim().toLowerCase() === '/new';
  return db.transaction().execute(async (trx) => {
    let sessionId: string;
    if (isNewCommand) {
      sessionId = await createSession(trx, key, message);
      await trx
        .insertInto('session_routes')
        .values({ session_key: key, session_id: sessionId })
        .onConflict((oc) => oc.column('session_key').doUpdateSet({ session_id: sessionId, updated_at: new Date() }))
        .execute();
    } else {
      sessionId = await routeToSession(trx, key, message);
    }
    const locked = await trx
      .updateTable('sessions')
      .set({ updated_at: new Date() })
      .where('id', '=', sessionId)
      .returning('wake_generation')
      .executeTakeFirstOrThrow();
    const eventId = randomUUID();
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
        kind: isNewCommand ? 'command' : 'message',
        status: isNewCommand ? 'done' : 'pending',
        turn_id: null,
        reply_text: isNewCommand ? NEW_SESSION_REPLY : null,
        error: null,
        completed_at: isNewCommand ? new Date() : null,
      })
      .onConflict((oc) => oc.column('dedupe_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!inserted) {
      // The same dedupe key committed concurrently; it already holds the truth.
      const seen = await findByDedupeKey(trx, message.dedupeKey ?? '');
      if (!seen) throw new Error('dedupe conflict without a stored event');
      throw new DuplicateRace(duplicateOf(seen));
    }
    return {
      eventId,
      sessionId,
      duplicate: false,
      needsWake: !isNewCommand,
      wakeGeneration: String(locked.wake_generation),
    };
  }).catch((error: unknown) => {
    // Rolled back our route/session work; report the event that won.
    if (error instanceof DuplicateRace) return error.accepted;
    throw error;
  });
}

class DuplicateRace extends Error {
  readonly accepted: AcceptedEvent;
  constructor(accepted: AcceptedEvent) {
    super('duplicate event');
    this.accepted = accepted;
  }
}

export interface EventView {
  id: string;
  sessionId: string;
  status: string;
  replyText: string | null;
  error: string | null;
}

export async function getEvent(db: Kysely<Database>, eventId: string): Promise<EventView | undefined> {
  const row = await db
    .selectFrom('inbound_events')
    .select(['id', 'session_id', 'status', 'reply_text', 'error'])
    .where('id', '=', eventId)
    .executeTakeFirst();
  if (!row) return undefined;
  return { id: row.id, sessionId: row.session_id, status: row.status, replyText: row.reply_text, error: row.error };
}

export interface PendingEvent {
  id: string;
  text: string;
  userId: string;
  userName: string | null;
  status: 'pending' | 'processing';
  turnId: string | null;
}

/** The session's open events in arrival order. */
export async function openEvents(db: Kysely<Database>, sessionId: string, limit = 100): Promise<PendingEvent[]> {
  const rows = await db
    .selectFrom('inbound_events')
    .select(['id', 'text', 'user_id', 'user_name', 'status', 'turn_id'])
    .where('session_id', '=', sessionId)
    .where('status', 'in', ['pending', 'processing'])
    .orderBy('received_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    text: row.text,
    userId: row.user_id,
    userName: row.user_name,
    status: row.status as 'pending' | 'processing',
    turnId: row.turn_id,
  }));
}
