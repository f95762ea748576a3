import { copyRows } from '@herald/db';
import type { BulkClient } from '@herald/db';

// Sessions loaded in bulk from another harness's history (the Hermes import, cli/src/hermes-import),
// on the import's one client inside its transaction. They go through a staging table so that a
// repeated import adds none (INSERT .. ON CONFLICT DO NOTHING on their name-based ids).

/** The columns of one imported session row, in the order IMPORTED_SESSION_COLUMNS names them. */
export const IMPORTED_SESSION_COLUMNS = [
  'id',
  'hermes_id',
  'platform',
  'chat_type',
  'chat_id',
  'thread_id',
  'system_prompt',
  'parent_id',
  'created_at',
  'title',
  'model',
  'ended_at',
  'end_reason',
  'imported_end_reason',
  'imported_usage',
] as const;

const STAGING_SESSIONS = `
  CREATE TEMPORARY TABLE hermes_sessions (
    id uuid, hermes_id text, platform text, chat_type text, chat_id text, thread_id text,
    system_prompt text, parent_id uuid, created_at timestamptz, title text, model text, ended_at timestamptz,
    end_reason text, imported_end_reason text, imported_usage jsonb
  ) ON COMMIT DROP`;

// Imported sessions get no route: they are history, not a chat that takes new messages.
const INSERT_SESSIONS = `
  INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, thread_id, origin_user_id,
                        system_prompt, parent_session_id, created_at, updated_at, title, model, ended_at, end_reason,
                        imported_end_reason, imported_usage, end_hooks_fired_at)
  SELECT id, $1, 'hermes:' || hermes_id, platform, chat_type, chat_id, thread_id, $2, system_prompt, parent_id,
         created_at, coalesce(ended_at, created_at), title, model, ended_at, end_reason, imported_end_reason, imported_usage,
         -- An ending that happened upstream is history: on_session_end does not fire for it here.
         ended_at
    FROM hermes_sessions
  ON CONFLICT (id) DO NOTHING`;

/** Stores the imported sessions `profileId`'s `userId` owns; returns how many were new. */
export async function importSessions(client: BulkClient, rows: Iterable<(string | null)[]>, profileId: string, userId: string): Promise<number> {
  await client.query(STAGING_SESSIONS);
  await copyRows(client, `COPY hermes_sessions (${IMPORTED_SESSION_COLUMNS.join(', ')}) FROM STDIN`, rows);
  const inserted = await client.query(INSERT_SESSIONS, [profileId, userId]);
  await client.query('DROP TABLE hermes_sessions');
  return inserted.rowCount ?? 0;
}

/** What an import finds stored of its sessions: each one's scope and the last seq of its messages (0: none). */
export interface ImportedSessionState {
  id: string;
  profileId: string;
  originUserId: string | null;
  platform: string;
  lastSeq: number;
}

export async function importedSessionStates(client: BulkClient, ids: readonly string[]): Promise<ImportedSessionState[]> {
  const result = await client.query<{ id: string; profile_id: string; origin_user_id: string | null; platform: string; seq: number }>(
    `SELECT s.id, s.profile_id, s.origin_user_id, s.platform, herald_last_seq(s.id) AS seq
       FROM sessions s WHERE s.id = ANY ($1::uuid[])`,
    [ids],
  );
  return result.rows.map((row) => ({ id: row.id, profileId: row.profile_id, originUserId: row.origin_user_id, platform: row.platform, lastSeq: row.seq }));
}
