import { storedTarget } from '@herald/core';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, HandoffStatus } from '@herald/db';
import { enqueueOutbound } from '@herald/delivery';
import { homeChat } from './home-chats.ts';
import type { HomeChat } from './home-chats.ts';
import { endSession, sessionKey } from '@herald/session';
import { handoffMessage, workStanding } from './handoff-message.ts';

// /handoff <platform> (docs/long-chats.md#handoff): a request (pending -> running -> done, or
// failed with a reason) that one worker claims and carries out in one transaction: the session
// moves to the platform's home chat (its route, its address, so replies go there), the home chat's
// own session gives way (ended 'handoff' when it is the requester's own, set aside unended when it
// is someone else's: nobody ends another person's conversation), and one short message in the home chat says where the work stands,
// through the outbox. A refusal rolls all of it back: the route and session stay as they were, and
// asking again retries.

/** A claim older than this is taken over: its holder died between claiming and finishing. */
export const HANDOFF_STALE_SECONDS = 30;
const MAX_REASON = 500;

export interface HandoffView {
  id: string;
  sessionId: string;
  platform: string;
  status: HandoffStatus;
  reason: string | null;
  requestedBy: string;
  targetChatId: string | null;
  requestedAt: Date;
  finishedAt: Date | null;
}

type HandoffRow = Selectable<Database['session_handoffs']>;

function view(row: HandoffRow): HandoffView {
  return {
    id: row.id,
    sessionId: row.session_id,
    platform: row.platform,
    status: row.status,
    reason: row.reason,
    requestedBy: row.requested_by,
    targetChatId: row.target_chat_id,
    requestedAt: row.requested_at,
    finishedAt: row.finished_at,
  };
}

export type HandoffRequest =
  | { kind: 'requested'; handoff: HandoffView }
  /** One is pending or running for this session already: that one is the answer. */
  | { kind: 'open'; handoff: HandoffView }
  | { kind: 'ended'; reason: string }
  | { kind: 'not_found' };

/** Asks for a session to move to `platform`'s home chat; the caller checked the platform is a chat platform. */
/** `byOperator`: asked by an operator (the API's token, a HERALD_OPERATORS member), who may end the home chat's own session. */
export async function requestHandoff(db: Kysely<Database> | Transaction<Database>, sessionId: string, platform: string, requestedBy: string, byOperator: boolean): Promise<HandoffRequest> {
  const session = await db.selectFrom('sessions').select(['ended_at', 'end_reason']).where('id', '=', sessionId).executeTakeFirst();
  if (!session) return { kind: 'not_found' };
  if (session.ended_at !== null) return { kind: 'ended', reason: session.end_reason ?? 'ended' };
  const inserted = await sql<HandoffRow>`
    INSERT INTO session_handoffs (id, session_id, platform, requested_by, by_operator)
    VALUES (${randomUUID()}::uuid, ${sessionId}::uuid, ${platform}, ${requestedBy}, ${byOperator})
    ON CONFLICT (session_id) WHERE status IN ('pending', 'running') DO NOTHING
    RETURNING *`.execute(db);
  const row = inserted.rows[0];
  if (row) {
    await sql`SELECT pg_notify('herald_handoff', ${row.id})`.execute(db);
    return { kind: 'requested', handoff: view(row) };
  }
  const open = await db.selectFrom('session_handoffs').selectAll().where('session_id', '=', sessionId).where('status', 'in', ['pending', 'running']).executeTakeFirst();
  // The open one finished between the insert and this read: ask again.
  if (!open) return requestHandoff(db, sessionId, platform, requestedBy, byOperator);
  return { kind: 'open', handoff: view(open) };
}

export async function getHandoff(db: Kysely<Database>, id: string): Promise<HandoffView | undefined> {
  const row = await db.selectFrom('session_handoffs').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : view(row);
}

/** The session's latest handoff request. */
export async function latestHandoff(db: Kysely<Database>, sessionId: string): Promise<HandoffView | undefined> {
  const row = await db.selectFrom('session_handoffs').selectAll().where('session_id', '=', sessionId).orderBy('requested_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row === undefined ? undefined : view(row);
}

export interface HandoffClaim {
  id: string;
  sessionId: string;
  platform: string;
  owner: string;
  attempt: number;
}

/** Claims the oldest pending request (or one whose holder died), for this owner only. */
export async function claimHandoff(db: Kysely<Database>, owner: string): Promise<HandoffClaim | undefined> {
  const claimed = await sql<{ id: string; session_id: string; platform: string; attempt: number }>`
    UPDATE session_handoffs SET status = 'running', owner = ${owner}, attempt = attempt + 1, claimed_at = clock_timestamp()
    WHERE id = (
      SELECT id FROM session_handoffs
      WHERE status = 'pending'
         OR (status = 'running' AND claimed_at < clock_timestamp() - make_interval(secs => ${HANDOFF_STALE_SECONDS}))
      ORDER BY requested_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id, session_id, platform, attempt`.execute(db);
  const row = claimed.rows[0];
  return row === undefined ? undefined : { id: row.id, sessionId: row.session_id, platform: row.platform, owner, attempt: row.attempt };
}

/** Why a handoff cannot be carried out; the request fails with this reason and nothing changes. */
export class HandoffRefused extends Error {
  override readonly name = 'HandoffRefused';
}

export type HandoffResult = { kind: 'done'; targetChatId: string } | { kind: 'failed'; reason: string } | { kind: 'lost' };

/**
 * Carries out a claimed request. `live` says whether this deployment can deliver to a platform.
 * Everything, the route, the session's address, the home chat's old session, the message and the
 * request's state, commits together; a refusal commits only the request's failure.
 */
export async function runHandoff(db: Kysely<Database>, claim: HandoffClaim, live: (platform: string) => boolean): Promise<HandoffResult> {
  try {
    return await db.transaction().execute(async (trx) => {
      if (!(await holdsClaim(trx, claim))) return { kind: 'lost' as const };
      if (!live(claim.platform)) throw new HandoffRefused(`${claim.platform} is not configured on this deployment`);
      const targetChatId = await rebind(trx, claim);
      await trx.updateTable('session_handoffs').set({ status: 'done', reason: null, target_chat_id: targetChatId, finished_at: new Date() }).where('id', '=', claim.id).execute();
      return { kind: 'done' as const, targetChatId };
    });
  } catch (error) {
    if (!(error instanceof HandoffRefused)) throw error;
    const reason = error.message.slice(0, MAX_REASON);
    const failed = await db
      .updateTable('session_handoffs')
      .set({ status: 'failed', reason, finished_at: new Date() })
      .where('id', '=', claim.id)
      .where('owner', '=', claim.owner)
      .where('attempt', '=', claim.attempt)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(failed.numUpdatedRows) === 0 ? { kind: 'lost' } : { kind: 'failed', reason };
  }
}

async function holdsClaim(trx: Transaction<Database>, claim: HandoffClaim): Promise<boolean> {
  const row = await trx
    .selectFrom('session_handoffs')
    .select('id')
    .where('id', '=', claim.id)
    .where('owner', '=', claim.owner)
    .where('attempt', '=', claim.attempt)
    .where('status', '=', 'running')
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

/** Moves the session to the home chat; returns the home chat's id. Throws HandoffRefused. */
async function rebind(trx: Transaction<Database>, claim: HandoffClaim): Promise<string> {
  // The row lock herald_accept_message and a compression take: a message for this session waits.
  const session = await trx.selectFrom('sessions').selectAll().where('id', '=', claim.sessionId).forUpdate().executeTakeFirstOrThrow();
  if (session.ended_at !== null) throw new HandoffRefused(`the session has ended (${session.end_reason ?? 'ended'}); hand off the chat's current session instead`);
  const home = await homeChat(trx, session.profile_id, claim.platform);
  if (!home) throw new HandoffRefused(`no home chat is set for ${claim.platform}: send /sethome in the ${claim.platform} chat that should be it, then ask again`);
  const key = sessionKey({ profileId: session.profile_id, ...address(home) });
  const current = await trx.selectFrom('session_routes').select('session_id').where('session_key', '=', key).forUpdate().executeTakeFirst();
  if (current && current.session_id !== session.id) await giveWay(trx, current.session_id, await requester(trx, claim));
  // The chat the session came from starts afresh: the session lives in the home chat now.
  await trx.deleteFrom('session_routes').where('session_id', '=', session.id).where('session_key', '<>', key).execute();
  await trx
    .insertInto('session_routes')
    .values({ session_key: key, session_id: session.id })
    .onConflict((conflict) => conflict.column('session_key').doUpdateSet({ session_id: session.id, updated_at: new Date() }))
    .execute();
  await trx
    .updateTable('sessions')
    .set({ session_key: key, platform: home.platform, chat_type: home.chatType, chat_id: home.chatId, thread_id: home.threadId, updated_at: new Date() })
    .where('id', '=', session.id)
    .execute();
  const text = handoffMessage(session.platform, session.title, await workStanding(trx, session.id));
  await enqueueOutbound(trx, { idempotencyKey: `handoff:${claim.id}`, platform: home.platform, target: target(home), text, sessionId: session.id, source: 'handoff' });
  await sql`SELECT pg_notify('herald_outbox', ${session.id})`.execute(trx);
  return home.chatId;
}

interface Requester {
  userId: string;
  operator: boolean;
}

async function requester(trx: Transaction<Database>, claim: HandoffClaim): Promise<Requester> {
  const row = await trx.selectFrom('session_handoffs').select(['requested_by', 'by_operator']).where('id', '=', claim.id).executeTakeFirstOrThrow();
  return { userId: row.requested_by, operator: row.by_operator };
}

/**
 * The home chat's own session gives way, unless it is busy (then the handoff fails and may be
 * retried). The requester's own session ends, and an operator may end any; anyone else's (the operator's home-chat conversation, to a person)
 * is only set aside: its route moves, but it is not ended, its end hooks do not fire, and its
 * messages stay its people's (docs/decisions/2026-12-05-message-scope.md).
 */
async function giveWay(trx: Transaction<Database>, sessionId: string, by: Requester): Promise<void> {
  const home = await trx.selectFrom('sessions').select('origin_user_id').where('id', '=', sessionId).forUpdate().executeTakeFirstOrThrow();
  const busy = await sql<{ busy: boolean }>`SELECT
      EXISTS (SELECT 1 FROM inbound_events WHERE session_id = ${sessionId}::uuid AND status IN ('pending', 'processing'))
   OR EXISTS (SELECT 1 FROM turns WHERE session_id = ${sessionId}::uuid AND status IN ('running', 'waiting')) AS busy`.execute(trx);
  if (busy.rows[0]?.busy === true) throw new HandoffRefused('the home chat is busy with its own conversation; ask again when it has been answered');
  if (by.operator || home.origin_user_id === by.userId) await endSession(trx, sessionId, 'handoff');
}

function address(home: HomeChat): { platform: string; account: string; chatType: string; chatId: string; threadId?: string } {
  return { platform: home.platform, account: home.account, chatType: home.chatType, chatId: home.chatId, ...(home.threadId === null ? {} : { threadId: home.threadId }) };
}

function target(home: HomeChat): Record<string, string> {
  return storedTarget({ account: home.account, chatId: home.chatId, chatType: home.chatType, threadId: home.threadId ?? undefined });
}
