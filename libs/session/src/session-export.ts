import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database, StoredToolCall } from '@herald/db';

// What `herald export` reads of a person's history to write it as another agent's state file.

/** One of a person's sessions with its model usage summed (counts as Postgres' bigint text). */
export interface ExportedSession {
  id: string;
  session_key: string;
  platform: string;
  chat_type: string;
  chat_id: string;
  thread_id: string | null;
  origin_user_id: string | null;
  system_prompt: string | null;
  parent_session_id: string | null;
  created_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
  imported_end_reason: string | null;
  title: string | null;
  model: string | null;
  imported_usage: Record<string, unknown> | null;
  input_tokens: string | null;
  output_tokens: string | null;
  api_calls: string | null;
}

/** The sessions a person started in a profile, oldest first. */
export async function sessionsForExport(db: Kysely<Database>, profileId: string, userId: string): Promise<ExportedSession[]> {
  const result = await sql<ExportedSession>`
    SELECT s.id, s.session_key, s.platform, s.chat_type, s.chat_id, s.thread_id, s.origin_user_id, s.system_prompt,
           s.parent_session_id, s.created_at, s.ended_at, s.end_reason, s.imported_end_reason, s.title, s.model, s.imported_usage,
           c.input_tokens, c.output_tokens, c.api_calls
      FROM sessions s
      LEFT JOIN LATERAL (SELECT sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, count(*) AS api_calls
                           FROM model_calls m WHERE m.session_id = s.id AND m.kind = 'turn') c ON true
     WHERE s.profile_id = ${profileId} AND s.origin_user_id = ${userId}
     ORDER BY s.created_at, s.id`.execute(db);
  return result.rows;
}

export interface ExportedMessage {
  session_id: string;
  role: string;
  content: string;
  tool_calls: StoredToolCall[] | null;
  tool_call_id: string | null;
  tool_name: string | null;
  created_at: Date;
  reasoning: string | null;
  platform_message_id: string | null;
}

/** A session's messages in order, every column an export keeps. */
export async function messagesForExport(db: Kysely<Database>, sessionId: string): Promise<ExportedMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['session_id', 'role', 'content', 'tool_calls', 'tool_call_id', 'tool_name', 'created_at', 'reasoning', 'platform_message_id'])
    .where('session_id', '=', sessionId)
    .orderBy('seq')
    .execute();
  return rows as ExportedMessage[];
}
