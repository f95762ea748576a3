import type { Db } from '@herald/db';
import { sessionKey } from './session-key.ts';
import type { RouteAddress } from './session-key.ts';

/** The session a chat's route points at now (its current one after /new), undefined when nobody has used the chat. */
export async function chatSessionId(db: Db, address: RouteAddress): Promise<string | undefined> {
  const row = await db.selectFrom('session_routes').select('session_id').where('session_key', '=', sessionKey(address)).executeTakeFirst();
  return row?.session_id;
}

/**
 * Whether a chat (a thread, say) already has a session route: how a platform tells a thread the
 * bot is part of, where a reply without a mention is still addressed to it.
 */
export async function chatRouteExists(db: Db, address: RouteAddress): Promise<boolean> {
  return (await chatSessionId(db, address)) !== undefined;
}
