import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

export interface StrandedSession {
  sessionId: string;
  wakeGeneration: string;
}

/**
 * Sessions with open events older than `graceMs` and no live lease: their wake-up job was lost
 * (Redis flushed, enqueue failed) or their worker died. The caller re-enqueues them.
 */
export async function findStrandedSessions(db: Kysely<Database>, graceMs: number, limit = 500): Promise<StrandedSession[]> {
  const rows = await sql<{ session_id: string; wake_generation: string }>`
    SELECT s.id AS session_id, s.wake_generation
    FROM sessions s
    WHERE EXISTS (
        SELECT 1 FROM inbound_events e
        WHERE e.session_id = s.id AND e.status IN ('pending', 'processing')
          AND e.received_at < clock_timestamp() - ${graceMs} * interval '1 millisecond')
      AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.status = 'waiting')
      AND NOT EXISTS (
        SELECT 1 FROM session_leases l
        WHERE l.session_id = s.id AND l.expires_at > clock_timestamp())
    LIMIT ${limit}`.execute(db);
  return rows.rows.map((row) => ({ sessionId: row.session_id, wakeGeneration: String(row.wake_generation) }));
}
