import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { appendAudit } from '@herald/audit';
import type { Database, HookEventName } from '@herald/db';
import { decisionAudit } from './hooks.ts';
import type { Hooks } from './hooks.ts';

interface PendingEvent {
  id: string;
  event: HookEventName;
  key: string;
  profile_id: string | null;
  session_id: string | null;
  payload: Record<string, unknown>;
}

/**
 * Fires the oldest waiting row of hook_events (written by the change's own transaction,
 * herald_queue_hook_event) and deletes it with the audit of what its hooks decided, in one
 * transaction. The row is taken under its lock (SKIP LOCKED: scheduler replicas share the table,
 * never a row); one whose firing dies stays for the next. False when none was waiting.
 */
export async function fireNextHookEvent(db: Kysely<Database>, hooks: Hooks): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<PendingEvent>`
      SELECT id, event, key, profile_id, session_id, payload FROM hook_events
      ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED`.execute(trx);
    const row = rows[0];
    if (row === undefined) return false;
    const set = await hooks.forProfile(row.profile_id ?? '');
    if (set.has(row.event)) {
      const fired = await set.fire(row.event, row.payload, { key: row.key });
      const actor = typeof row.payload.user_id === 'string' ? row.payload.user_id : null;
      await appendAudit(trx, decisionAudit(row.event, fired.decisions, { actor, profileId: row.profile_id, sessionId: row.session_id }));
    }
    await trx.deleteFrom('hook_events').where('id', '=', row.id).execute();
    return true;
  });
}
