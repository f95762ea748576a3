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

/** What a shared chat type makes visible of a session: every message, whichever chat it was written in. */
export const WHOLE_SESSION = '*';

/**
 * The rest of visibleSessions, by message: what the person sees of sessions they did not start,
 * as `<session id> <chat key>` pairs the search reads before it plans. A session of a chat type
 * the profile shares gives `<id> *` (all of it); a session the person wrote in gives one pair per
 * chat they wrote in (inbound_events.chat_key), so what a handoff carried into another chat
 * afterwards stays out (docs/decisions/2026-12-05-message-scope.md). Two lookups that each read
 * only what they return: the profile's sessions of a shared chat type through
 * sessions_profile_chat_type_idx (one equality lookup per shared type, none when nothing is shared;
 * `chat_type = ANY (<the profile's types>)` is not an index condition, and scanned every session
 * even with no type shared), and the person's own events through inbound_events_user_idx.
 */
export function otherVisibleChats(scope: SearchScope): RawBuilder<string[]> {
  return sql<string[]>`ARRAY(
    SELECT s.id::text || ' ' || ${WHOLE_SESSION} FROM profiles p CROSS JOIN LATERAL unnest(p.search_shared_chat_types) AS shared(chat_type)
      JOIN sessions s ON s.profile_id = p.id AND s.chat_type = shared.chat_type
    WHERE p.id = ${scope.profileId} AND s.origin_user_id IS DISTINCT FROM ${scope.userId} AND ${delegation(scope, 's')}
    UNION
    SELECT s.id::text || ' ' || e.chat_key FROM (SELECT DISTINCT e.session_id, e.chat_key FROM inbound_events e WHERE e.user_id = ${scope.userId}) e
      JOIN sessions s ON s.id = e.session_id
    WHERE s.profile_id = ${scope.profileId} AND e.chat_key IS NOT NULL AND ${delegation(scope, 's')}
      AND (s.origin_user_id IS DISTINCT FROM ${scope.userId} OR ${chatTypeOf(sql`e.chat_key`, sql`s.profile_id`)} <> 'dm'))`;
}

/**
 * The chat type in a route key (libs/session/src/session-key.ts: agent:<profile>:<platform>:<chat_type>:<chat_id>).
 * A person's own sessions join the pairs only for chats others write in too: in their own DM
 * every message is already theirs (ownedBy), and what a handoff brought in afterwards is not.
 */
function chatTypeOf(key: RawBuilder<unknown>, profileId: RawBuilder<unknown>): RawBuilder<unknown> {
  // Past the profile (whatever it contains), then <platform>:<chat_type>.
  return sql`split_part(substr(${key}, length('agent:' || ${profileId} || ':') + 1), ':', 2)`;
}

/** The session ids of otherVisibleChats' pairs. */
export function sessionsOfChats(pairs: readonly string[]): string[] {
  return [...new Set(pairs.map((pair) => pair.slice(0, pair.indexOf(' '))))];
}

/** Messages `m` of otherVisibleChats' sessions that the pairs let the person see. */
export function inVisibleChats(pairs: readonly string[]): RawBuilder<unknown> {
  return sql`(m.session_id::text || ' ' || ${WHOLE_SESSION} = ANY (${[...pairs]}::text[])
    OR m.session_id::text || ' ' || m.chat_key = ANY (${[...pairs]}::text[]))`;
}

/**
 * Whether the person may read message `m` of a session they may see (visibleSessions): they wrote
 * it or it answered them, the profile shares its session's chat type, or they wrote in the chat it
 * was written in. A transcript read filters by this, so a session handed off into someone else's
 * chat shows its starter nothing written there.
 */
export function messageVisible(scope: SearchScope): RawBuilder<unknown> {
  return sql`(m.owner_id = ${scope.userId}
    OR EXISTS (SELECT 1 FROM sessions vs JOIN profiles vp ON vp.id = vs.profile_id
               WHERE vs.id = m.session_id AND vs.chat_type = ANY (vp.search_shared_chat_types))
    OR EXISTS (SELECT 1 FROM inbound_events ve
               WHERE ve.user_id = ${scope.userId} AND ve.session_id = m.session_id AND ve.chat_key = m.chat_key))`;
}

export async function canSeeSession(db: Db, scope: SearchScope, sessionId: string): Promise<boolean> {
  if (!isUuid(sessionId)) return false;
  const rows = await sql`SELECT 1 FROM (${visibleSessions(scope)}) v WHERE v.id = ${sessionId}::uuid`.execute(db);
  return rows.rows.length > 0;
}
