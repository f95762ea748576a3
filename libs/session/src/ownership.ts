import { isUuid } from '@herald/core';
import type { Db } from '@herald/db';

/** What the API's permission check needs of a resource: its profile and the person it belongs to. */
export interface SessionResourceOwner {
  profileId: string;
  ownerKey: string | null;
}

export type SessionResourceKind = 'session' | 'wait' | 'event' | 'run';

/**
 * The owner of a session, a wait (its session's starter), an event (who sent it) or a run (whose
 * turn delegated it); undefined when there is no such thing, so the caller's "not yours" and
 * "does not exist" are the same 404.
 */
export async function sessionResourceOwner(db: Db, kind: SessionResourceKind, id: string): Promise<SessionResourceOwner | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await ownerQuery(db, kind, id).executeTakeFirst();
  return row ? { profileId: row.profile_id, ownerKey: row.owner } : undefined;
}

function ownerQuery(db: Db, kind: SessionResourceKind, id: string) {
  const sessions = db.selectFrom('sessions as s');
  switch (kind) {
    case 'session':
      return sessions.select(['s.profile_id', 's.origin_user_id as owner']).where('s.id', '=', id);
    case 'wait':
      return sessions.innerJoin('tool_waits as w', 'w.session_id', 's.id').select(['s.profile_id', 's.origin_user_id as owner']).where('w.id', '=', id);
    case 'event':
      return sessions.innerJoin('inbound_events as e', 'e.session_id', 's.id').select(['s.profile_id', 'e.user_id as owner']).where('e.id', '=', id);
    case 'run':
      return sessions.innerJoin('subagent_runs as r', 'r.parent_session_id', 's.id').select(['s.profile_id', 'r.user_id as owner']).where('r.id', '=', id);
  }
}
