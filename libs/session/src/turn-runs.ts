import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** Whether the turn `turnId` started any delegate_task child run: a parent turn's id names its runs. */
export async function turnStartedRuns(db: Kysely<Database> | Transaction<Database>, turnId: string): Promise<boolean> {
  return (await db.selectFrom('subagent_runs').select('id').where('parent_turn_id', '=', turnId).limit(1).executeTakeFirst()) !== undefined;
}
