import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** Whether `turnId` is the session's one turn so far: its first, which fires on_session_start. */
export async function isOnlyTurnOfSession(db: Kysely<Database> | Transaction<Database>, sessionId: string, turnId: string): Promise<boolean> {
  const first = await db.selectFrom('turns').select('id').where('session_id', '=', sessionId).orderBy('started_at').orderBy('id').limit(2).execute();
  return first.length === 1 && first[0]?.id === turnId;
}
