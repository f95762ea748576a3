import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** A profile's API-set hooks as stored (saveProfileHooks writes them); none when it never set any. */
export async function profileHooksOf(db: Kysely<Database> | Transaction<Database>, profileId: string): Promise<unknown[]> {
  const row = await db.selectFrom('profile_hooks').select('hooks').where('profile_id', '=', profileId).executeTakeFirst();
  return row?.hooks ?? [];
}
