import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

/** What an operator narrows the session list by; every field is optional. */
export interface SessionFilter {
  profileId?: string | undefined;
  platform?: string | undefined;
  /** A person: the session's origin user, or anyone who wrote in it. */
  userId?: string | undefined;
  chatId?: string | undefined;
  /** live: a route still points at the session (its chat's next message lands there); ended: replaced by /new. */
  state?: 'live' | 'ended' | undefined;
  parentSessionId?: string | undefined;
  /** Include child sessions of delegate_task (left out unless asked for). */
  subagents?: boolean | undefined;
  /** Keyset cursor: sessions created before this one (newest first). */
  beforeSessionId?: string | undefined;
}

export interface SessionSummary {
  id: string;
  sessionKey: string;
  profileId: string;
  platform: string;
  chatType: string;
  chatId: string;
  threadId: string | null;
  originUserId: string | null;
  parentSessionId: string | null;
  createdAt: Date;
  updatedAt: Date;
  live: boolean;
  /** The seq of the newest message (0 when empty): the transcript's length, read from the unique index. */
  lastSeq: number;
  children: number;
  pendingWaits: number;
}

/** A session's columns and the counts a list shows beside them, before any filter. */
function summaryQuery(db: Kysely<Database>) {
  return db
    .selectFrom('sessions as s')
    .select([
      's.id',
      's.session_key',
      's.profile_id',
      's.platform',
      's.chat_type',
      's.chat_id',
      's.thread_id',
      's.origin_user_id',
      's.parent_session_id',
      's.created_at',
      's.updated_at',
      sql<boolean>`EXISTS (SELECT 1 FROM session_routes r WHERE r.session_id = s.id)`.as('live'),
      sql<number>`herald_last_seq(s.id)`.as('last_seq'),
      sql<string>`(SELECT count(*) FROM sessions c WHERE c.parent_session_id = s.id)`.as('children'),
      sql<string>`(SELECT count(*) FROM tool_waits w WHERE w.session_id = s.id AND w.status = 'pending')`.as('pending_waits'),
    ]);
}

/** Sessions newest first, `limit` per page, by keyset on (created_at, id). */
export async function listSessions(db: Kysely<Database>, filter: SessionFilter, limit: number): Promise<{ sessions: SessionSummary[]; more: boolean }> {
  let query = summaryQuery(db);
  if (filter.profileId !== undefined) query = query.where('s.profile_id', '=', filter.profileId);
  if (filter.platform !== undefined) query = query.where('s.platform', '=', filter.platform);
  if (filter.chatId !== undefined) query = query.where('s.chat_id', '=', filter.chatId);
  if (filter.parentSessionId !== undefined) query = query.where('s.parent_session_id', '=', filter.parentSessionId);
  if (filter.subagents !== true) query = query.where('s.delegated_from', 'is', null);
  if (filter.userId !== undefined) {
    const userId = filter.userId;
    query = query.where((eb) =>
      eb.or([eb('s.origin_user_id', '=', userId), eb.exists(eb.selectFrom('inbound_events as e').select('e.id').whereRef('e.session_id', '=', 's.id').where('e.user_id', '=', userId))]),
    );
  }
  if (filter.state !== undefined) {
    const routed = sql<boolean>`EXISTS (SELECT 1 FROM session_routes r WHERE r.session_id = s.id)`;
    query = query.where(filter.state === 'live' ? routed : sql<boolean>`NOT ${routed}`);
  }
  if (filter.beforeSessionId !== undefined) {
    query = query.where(sql<boolean>`(s.created_at, s.id) < (SELECT b.created_at, b.id FROM sessions b WHERE b.id = ${filter.beforeSessionId})`);
  }
  const rows = await query
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id', 'desc')
    .limit(limit + 1)
    .execute();
  return {
    more: rows.length > limit,
    sessions: rows.slice(0, limit).map((row) => ({
      id: row.id,
      sessionKey: row.session_key,
      profileId: row.profile_id,
      platform: row.platform,
      chatType: row.chat_type,
      chatId: row.chat_id,
      threadId: row.thread_id,
      originUserId: row.origin_user_id,
      parentSessionId: row.parent_session_id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      live: row.live,
      lastSeq: Number(row.last_seq),
      children: Number(row.children),
      pendingWaits: Number(row.pending_waits),
    })),
  };
}
