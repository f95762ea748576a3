import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

type Executor = Kysely<Database> | Transaction<Database>;

/** The session's oldest event not answered yet, with the turn working on it (null: none yet). */
export async function oldestOpenEvent(db: Executor, sessionId: string): Promise<{ id: string; turnId: string | null } | undefined> {
  const row = await db
    .selectFrom('inbound_events')
    .select(['id', 'turn_id'])
    .where('session_id', '=', sessionId)
    .where('status', 'in', ['pending', 'processing'])
    .orderBy('received_at')
    .orderBy('id')
    .executeTakeFirst();
  return row ? { id: row.id, turnId: row.turn_id } : undefined;
}

/**
 * Ends a dead-lettered run in one transaction: the open events of its turn (or the one event, when
 * no turn took it yet) fail with the reason and the reply, and the turn fails too.
 */
export async function failOpenWork(db: Kysely<Database>, sessionId: string, oldest: { id: string; turnId: string | null }, reason: string, reply: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const now = new Date();
    await trx
      .updateTable('inbound_events')
      .set({ status: 'failed', error: `dead letter: ${reason}`, reply_text: reply, completed_at: now })
      .where('session_id', '=', sessionId)
      .where('status', 'in', ['pending', 'processing'])
      .where((eb) => (oldest.turnId === null ? eb('id', '=', oldest.id) : eb('turn_id', '=', oldest.turnId)))
      .execute();
    if (oldest.turnId !== null) {
      await trx
        .updateTable('turns')
        .set({ status: 'failed', error: `dead letter: ${reason}`, ended_at: now })
        .where('id', '=', oldest.turnId)
        .where('status', 'in', ['running', 'waiting'])
        .execute();
    }
  });
}

/** Messages that arrived while a turn runs and wait to join it (steer, interrupt), oldest first. */
export async function pendingMessages(db: Executor, sessionId: string): Promise<{ id: string; text: string; user_id: string }[]> {
  return db
    .selectFrom('inbound_events')
    .select(['id', 'text', 'user_id'])
    .where('session_id', '=', sessionId)
    .where('status', '=', 'pending')
    .where('kind', '=', 'message')
    .orderBy('received_at')
    .orderBy('id')
    .execute();
}

/** Moves those of `ids` still pending into turn `turnId`; returns the ids it took (a conditional flip: each joins one turn). */
export async function claimForTurn(trx: Executor, ids: readonly string[], turnId: string): Promise<{ id: string }[]> {
  return trx.updateTable('inbound_events').set({ status: 'processing', turn_id: turnId }).where('id', 'in', ids).where('status', '=', 'pending').returning('id').execute();
}
