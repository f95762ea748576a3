import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, SessionEndReason } from '@herald/db';

// The one way a session ends (compression, /new, a reset, a handoff), so the on_session_end hook
// has one source: every ended session with end_hooks_fired_at unset is due, and a worker fires its
// hooks once (claimSessionEnds). Ending and announcing are decoupled so the hook never runs inside
// the transaction that ends the session, and a process that ends a session needs no hooks itself.

/** Ends a live session with its reason, in the caller's transaction; false when it had already ended. */
export async function endSession(trx: Transaction<Database>, sessionId: string, reason: SessionEndReason): Promise<boolean> {
  const ended = await trx
    .updateTable('sessions')
    .set({ ended_at: new Date(), end_reason: reason, updated_at: new Date() })
    .where('id', '=', sessionId)
    .where('ended_at', 'is', null)
    .executeTakeFirst();
  if (Number(ended.numUpdatedRows) === 0) return false;
  await sql`SELECT pg_notify('herald_session_end', ${sessionId})`.execute(trx);
  return true;
}

/** An ended session whose on_session_end hooks are due, as the hook event describes it. */
export interface SessionEnd {
  sessionId: string;
  profileId: string;
  platform: string;
  chatType: string;
  chatId: string;
  originUserId: string | null;
  reason: SessionEndReason;
  endedAt: Date;
  /** The session that carries on: the compression child, if any. */
  childSessionId: string | null;
}

/**
 * Takes one ended session whose hooks are due, locked for this transaction (SKIP LOCKED: another
 * worker takes the next one), for `fire` to announce; it is marked fired in the same transaction.
 * A process that dies while firing rolls back, and the ending is announced again by the next worker.
 * Returns false when none is due.
 */
export async function fireNextSessionEnd(db: Kysely<Database>, fire: (end: SessionEnd, trx: Transaction<Database>) => Promise<void>): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await sql<{
      id: string;
      profile_id: string;
      platform: string;
      chat_type: string;
      chat_id: string;
      origin_user_id: string | null;
      end_reason: SessionEndReason;
      ended_at: Date;
      child_session_id: string | null;
    }>`SELECT s.id, s.profile_id, s.platform, s.chat_type, s.chat_id, s.origin_user_id, s.end_reason, s.ended_at,
              (SELECT c.child_session_id FROM session_compressions c WHERE c.session_id = s.id AND c.status = 'done') AS child_session_id
       FROM sessions s
       WHERE s.ended_at IS NOT NULL AND s.end_hooks_fired_at IS NULL
       ORDER BY s.ended_at LIMIT 1 FOR UPDATE OF s SKIP LOCKED`.execute(trx);
    const end = row.rows[0];
    if (end === undefined) return false;
    await fire(
      {
        sessionId: end.id,
        profileId: end.profile_id,
        platform: end.platform,
        chatType: end.chat_type,
        chatId: end.chat_id,
        originUserId: end.origin_user_id,
        reason: end.end_reason,
        endedAt: end.ended_at,
        childSessionId: end.child_session_id,
      },
      trx,
    );
    await trx.updateTable('sessions').set({ end_hooks_fired_at: new Date() }).where('id', '=', end.id).execute();
    return true;
  });
}
