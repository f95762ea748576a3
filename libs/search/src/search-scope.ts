import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import { isUuid } from '@herald/core';
import type { Db } from '@herald/db';

/** Who is asking: a person in a profile. Every search and every transcript read goes through this. */
export interface SearchScope {
  profileId: string;
  userId: string;
  /** Include the child sessions of delegate_task (hidden unless asked for: docs/subagents.md). */
  subagents?: boolean | undefined;
}

/** Child sessions of delegate_task are left out unless the scope asks for them. */
function delegation(scope: SearchScope, alias: 's' | 'm'): RawBuilder<unknown> {
  if (scope.subagents === true) return sql`true`;
  return alias === 's' ? sql`s.delegated_from IS NULL` : sql`m.platform IS DISTINCT FROM 'subagent'`;
}

/**
 * The sessions a person may search in a profile: the ones they started, the ones they wrote in
 * (group chats), and those whose chat type the profile shares (profiles.search_shared_chat_types).
 * The tool and the API both use this, so they cannot disagree. Search splits it in two
 * (ownedBy and otherVisibleSessionIds) so the owned part is found inside the owner's indexes.
 */
export function visibleSessions(scope: SearchScope): RawBuilder<unknown> {
  return sql`
    SELECT s.id, s.platform, s.chat_type, s.created_at, s.parent_session_id FROM sessions s
    WHERE s.profile_id = ${scope.profileId} AND ${delegation(scope, 's')} AND (
      s.origin_user_id = ${scope.userId}
      OR ${sharedOrWrittenIn(scope)})`;
}

function sharedOrWrittenIn(scope: SearchScope): RawBuilder<unknown> {
  return sql`(s.chat_type = ANY ((SELECT p.search_shared_chat_types FROM profiles p WHERE p.id = ${scope.profileId})::text[])
      OR EXISTS (SELECT 1 FROM inbound_events e WHERE e.user_id = ${scope.userId} AND e.session_id = s.id))`;
}

/**
 * Messages of the sessions the person started, by the scope columns every message carries
 * (migrations/0024_search_scope.sql): the leading columns of the search indexes.
 */
export function ownedBy(scope: SearchScope): RawBuilder<unknown> {
  return sql`m.owner_id = ${scope.userId} AND m.profile_id = ${scope.profileId} AND ${delegation(scope, 'm')}`;
}

/**
 * The rest of visibleSessions: sessions the person sees without having started them, as an array
 * of ids the search reads before it plans. Two lookups that each read only what they return: the
 * profile's sessions of a shared chat type through sessions_profile_chat_type_idx (one equality
 * lookup per shared type, none when nothing is shared; `chat_type = ANY (<the profile's types>)`
 * is not an index condition, and scanned every session even with no type shared), and the
 * sessions of the person's own events through inbound_events_user_idx.
 */
export function otherVisibleSessionIds(scope: SearchScope): RawBuilder<string[]> {
  return sql<string[]>`ARRAY(
    SELECT s.id FROM profiles p CROSS JOIN LATERAL unnest(p.search_shared_chat_types) AS shared(chat_type)
      JOIN sessions s ON s.profile_id = p.id AND s.chat_type = shared.chat_type
    WHERE p.id = ${scope.profileId} AND s.origin_user_id IS DISTINCT FROM ${scope.userId} AND ${delegation(scope, 's')}
    UNION
    SELECT s.id FROM (SELECT DISTINCT e.session_id FROM inbound_events e WHERE e.user_id = ${scope.userId}) e
      JOIN sessions s ON s.id = e.session_id
    WHERE s.profile_id = ${scope.profileId} AND s.origin_user_id IS DISTINCT FROM ${scope.userId} AND ${delegation(scope, 's')})`;
}

export async function canSeeSession(db: Db, scope: SearchScope, sessionId: string): Promise<boolean> {
  if (!isUuid(sessionId)) return false;
  const rows = await sql`SELECT 1 FROM (${visibleSessions(scope)}) v WHERE v.id = ${sessionId}::uuid`.execute(db);
  return rows.rows.length > 0;
}
