import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** A session's task list (the todo tool's), as stored: its items and how often it was written. */
export interface StoredTodos {
  items: unknown[];
  revision: number;
}

/** The session's task list; empty at revision 0 before the first write. With `lock`, the row is locked for the caller's write. */
export async function sessionTodos(db: Kysely<Database> | Transaction<Database>, sessionId: string, lock = false): Promise<StoredTodos> {
  const query = db.selectFrom('session_todos').select(['items', 'revision']).where('session_id', '=', sessionId);
  const row = await (lock ? query.forUpdate() : query).executeTakeFirst();
  return { items: (row?.items as unknown[] | undefined) ?? [], revision: row?.revision ?? 0 };
}

/** Stores the session's task list at `revision`, replacing the one before, in the caller's (fenced) transaction. */
export async function saveSessionTodos(trx: Transaction<Database>, sessionId: string, items: readonly unknown[], revision: number): Promise<void> {
  await trx
    .insertInto('session_todos')
    .values({ session_id: sessionId, items: JSON.stringify(items), revision })
    .onConflict((oc) => oc.column('session_id').doUpdateSet({ items: JSON.stringify(items), revision, updated_at: new Date() }))
    .execute();
}
