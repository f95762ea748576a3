/**
 * The people Herald has heard from: each platform-qualified id that wrote a message, with the name
 * it last wrote under. What the console suggests where it asks for a person; a people directory
 * can take its place behind the same route.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

export interface PersonSeen {
  /** Platform-qualified (`api:alice`, `<platform>:42`). */
  userId: string;
  name: string | null;
  lastSeenAt: Date;
}

/** `%` and `_` in what a person typed match themselves, not any text. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

/** People whose id or name contains `query` (case-insensitive), the most recently heard first. */
export async function suggestPeople(db: Kysely<Database>, query: string, limit: number): Promise<PersonSeen[]> {
  const pattern = likePattern(query.trim());
  const rows = await db
    .selectFrom('inbound_events')
    .select((eb) => [
      'user_id',
      // The name of the newest message that carried one.
      sql<string | null>`(array_agg(user_name ORDER BY received_at DESC) FILTER (WHERE user_name IS NOT NULL))[1]`.as('name'),
      eb.fn.max('received_at').as('last_seen_at'),
    ])
    .where((eb) => eb.or([eb('user_id', 'ilike', pattern), eb('user_name', 'ilike', pattern)]))
    .groupBy('user_id')
    .orderBy('last_seen_at', 'desc')
    .orderBy('user_id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ userId: row.user_id, name: row.name, lastSeenAt: new Date(row.last_seen_at) }));
}
