import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/** Whose past messages to look in: a person's own sessions of a profile, the current one left out. */
export interface PastMessagesQuery {
  profileId: string;
  userId: string;
  excludeSessionId: string;
  /** Any of these words, matched case-insensitively as plain text. */
  terms: readonly string[];
  limit: number;
}

/** The person's newest user and assistant messages in their other sessions that contain one of the words. */
export async function pastMessagesMatching(db: Kysely<Database>, query: PastMessagesQuery): Promise<{ role: string; content: string; created_at: Date }[]> {
  const patterns = query.terms.map((term) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  const rows = await sql<{ role: string; content: string; created_at: Date }>`
    SELECT m.role, m.content, m.created_at
    FROM messages m JOIN sessions s ON s.id = m.session_id
    WHERE s.profile_id = ${query.profileId} AND s.origin_user_id = ${query.userId} AND s.id <> ${query.excludeSessionId}
      AND m.role IN ('user', 'assistant') AND m.content ILIKE ANY (${patterns}::text[])
    ORDER BY m.created_at DESC
    LIMIT ${query.limit}`.execute(db);
  return rows.rows;
}
