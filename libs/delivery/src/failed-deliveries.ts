import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

export interface FailedDelivery {
  id: string;
  sessionId: string | null;
  platform: string;
  source: string;
  target: Record<string, string>;
  text: string;
  attempts: number;
  lastError: string | null;
  createdAt: Date;
  failedAt: Date;
}

/** The outbox's dead letters: rows that ended `failed` (their retry budget spent, or refused for good), newest first. */
export async function listFailedDeliveries(db: Kysely<Database>, limit: number): Promise<FailedDelivery[]> {
  const rows = await db
    .selectFrom('outbox')
    .select(['id', 'session_id', 'platform', 'source', 'target', 'text', 'attempts', 'last_error', 'created_at', 'next_attempt_at'])
    .where('status', '=', 'failed')
    .orderBy('next_attempt_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    id: row.id,
    sessionId: row.session_id,
    platform: row.platform,
    source: row.source,
    target: row.target as Record<string, string>,
    text: row.text,
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: row.created_at,
    // markAttemptFailed stamps next_attempt_at with the moment the row failed for good.
    failedAt: row.next_attempt_at,
  }));
}

/**
 * Gives a failed row a fresh retry budget: back to `pending`, due now, and the consumers told. Parts
 * already sent stay sent (parts_sent), so a retry sends only what is missing. False when the row is
 * not failed (already retried, delivered, or no such row).
 */
export async function retryFailedDelivery(db: Kysely<Database>, id: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('outbox')
      .set({ status: 'pending', attempts: 0, next_attempt_at: new Date(), last_error: null, claim_token: null, claim_expires_at: null })
      .where('id', '=', id)
      .where('status', '=', 'failed')
      .returning('platform')
      .executeTakeFirst();
    if (!row) return false;
    await sql`SELECT pg_notify('herald_outbox', ${row.platform})`.execute(trx);
    return true;
  });
}

/** Drops a failed row for good (the reply stays in the transcript). False when the row is not failed. */
export async function discardFailedDelivery(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('outbox').where('id', '=', id).where('status', '=', 'failed').executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
