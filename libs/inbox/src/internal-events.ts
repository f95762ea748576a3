import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/** Something that happened outside a turn and that the session answers in a turn of its own. */
export interface InternalEvent {
  sessionId: string;
  /** Unique per occurrence: posting the same notice twice stores it once. */
  dedupeKey: string;
  /** The person the event is on behalf of (who started the process, say): their limits count it. */
  userId: string;
  /** Who speaks, as the transcript shows it ('process', 'subagent'). */
  userName: string;
  text: string;
}

/**
 * Posts an internal event into a session's inbox, as a background subagent's result is posted
 * (herald_subagent_settle): durably, deduplicated, on the session's own platform. Returns whether
 * it was new; the caller wakes the session after the commit.
 */
export async function postInternalEvent(db: Kysely<Database>, event: InternalEvent): Promise<boolean> {
  const result = await sql`
    INSERT INTO inbound_events (id, session_id, dedupe_key, platform, user_id, user_name, text)
    SELECT ${randomUUID()}::uuid, s.id, ${event.dedupeKey}, s.platform, ${event.userId}, ${event.userName}, ${event.text}
      FROM sessions s WHERE s.id = ${event.sessionId}::uuid
    ON CONFLICT (dedupe_key) DO NOTHING`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}
