import { copyRows } from '@herald/db';
import type { BulkClient } from '@herald/db';

// Messages loaded in bulk from another harness's history (the Hermes import), on the import's one
// client inside its transaction: COPY straight into messages, so Postgres computes the search
// columns while the importer reads the next rows.

/**
 * The columns of one imported message row, in order. The last three are the session's scope, read
 * from the stored sessions (the one source, as herald_message_scope reads it), so the per-row scope
 * trigger stays idle.
 */
export const IMPORTED_MESSAGE_COLUMNS = [
  'session_id',
  'seq',
  'role',
  'content',
  'tool_calls',
  'tool_call_id',
  'tool_name',
  'created_at',
  'reasoning',
  'platform_message_id',
  'profile_id',
  'owner_id',
  'platform',
] as const;

export async function importMessages(client: BulkClient, rows: Iterable<(string | null)[]>): Promise<void> {
  await copyRows(client, `COPY messages (${IMPORTED_MESSAGE_COLUMNS.join(', ')}) FROM STDIN`, rows);
}

/**
 * After the import's commit: fresh statistics when its search indexes were rebuilt, or the GIN
 * pending lists that took the rows merged into the indexes.
 */
export async function settleImportedMessages(client: BulkClient, indexesRebuilt: boolean): Promise<void> {
  if (indexesRebuilt) {
    await client.query('ANALYZE messages');
    return;
  }
  await client.query(`
    SELECT gin_clean_pending_list(i.indexrelid::regclass)
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
     WHERE i.indrelid = 'messages'::regclass AND am.amname = 'gin'`);
}
