import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, QueueMode, SessionEndReason } from '@herald/db';

type Executor = Kysely<Database> | Transaction<Database>;

/** Whether a session with this id exists (ended or not). */
export async function sessionExists(db: Executor, id: string): Promise<boolean> {
  return (await db.selectFrom('sessions').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/**
 * The wake generation of each of these sessions that exists, as the wake-up job names it: what a
 * caller that made them runnable (an answered wait, a cancelled child) enqueues their wake-up with.
 */
export async function wakeGenerations(db: Executor, ids: readonly string[]): Promise<{ sessionId: string; wakeGeneration: string }[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('sessions').select(['id', 'wake_generation']).where('id', 'in', ids).execute();
  return rows.map((row) => ({ sessionId: row.id, wakeGeneration: String(row.wake_generation) }));
}

/** One session's own record: its keys, stored system prompt, queue mode, end, and its first child. */
export interface SessionRecord {
  sessionId: string;
  sessionKey: string;
  profileId: string;
  platform: string;
  queueMode: QueueMode;
  systemPrompt: string | null;
  parentSessionId: string | null;
  childSessionId: string | null;
  title: string | null;
  endReason: SessionEndReason | null;
  endedAt: Date | null;
  createdAt: Date;
}

export async function sessionRecord(db: Executor, id: string): Promise<SessionRecord | undefined> {
  const row = await db
    .selectFrom('sessions')
    .select(['id', 'session_key', 'profile_id', 'platform', 'queue_mode', 'system_prompt', 'parent_session_id', 'created_at', 'title', 'ended_at', 'end_reason'])
    .select((eb) => eb.selectFrom('sessions as c').select('c.id').whereRef('c.parent_session_id', '=', 'sessions.id').orderBy('c.created_at').limit(1).as('child_session_id'))
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    sessionId: row.id,
    sessionKey: row.session_key,
    profileId: row.profile_id,
    platform: row.platform,
    queueMode: row.queue_mode,
    systemPrompt: row.system_prompt,
    parentSessionId: row.parent_session_id,
    childSessionId: row.child_session_id,
    title: row.title,
    endReason: row.end_reason,
    endedAt: row.ended_at,
    createdAt: row.created_at,
  };
}

/** Sets how a session takes messages that arrive during a turn; false when there is no such session. */
export async function setQueueMode(db: Executor, id: string, mode: QueueMode): Promise<boolean> {
  const updated = await db.updateTable('sessions').set({ queue_mode: mode, updated_at: new Date() }).where('id', '=', id).executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Compressions in a row that did not shrink the session (compaction stops trying after a few). */
export async function ineffectiveCompressions(db: Executor, sessionId: string): Promise<number> {
  const row = await db.selectFrom('sessions').select('ineffective_compressions').where('id', '=', sessionId).executeTakeFirstOrThrow();
  return row.ineffective_compressions;
}

/** The session a compression made this one from; null for a first session. */
export async function parentSessionOf(db: Executor, sessionId: string): Promise<string | null> {
  const row = await db.selectFrom('sessions').select('parent_session_id').where('id', '=', sessionId).executeTakeFirstOrThrow();
  return row.parent_session_id;
}

/** The topmost session of a delegation chain (children work in its workspace); itself when it delegated from none. */
export async function delegatingRoot(db: Executor, sessionId: string): Promise<string> {
  const result = await sql<{ id: string }>`
    WITH RECURSIVE up AS (
      SELECT id, delegated_from, 0 AS hops FROM sessions WHERE id = ${sessionId}::uuid
      UNION ALL
      SELECT s.id, s.delegated_from, up.hops + 1 FROM sessions s JOIN up ON s.id = up.delegated_from WHERE up.hops < 20
    )
    SELECT id FROM up WHERE delegated_from IS NULL LIMIT 1`.execute(db);
  return result.rows[0]?.id ?? sessionId;
}
