import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** A profile's API-set hooks as stored (saveProfileHooks writes them); none when it never set any. */
export async function profileHooksOf(db: Kysely<Database> | Transaction<Database>, profileId: string): Promise<unknown[]> {
  const row = await db.selectFrom('profile_hooks').select('hooks').where('profile_id', '=', profileId).executeTakeFirst();
  return row?.hooks ?? [];
}

/** Gives profile `name` a copy of `from`'s hooks, in the transaction that creates it (createProfile's copy). */
export async function copyProfileHooks(trx: Transaction<Database>, name: string, from: string): Promise<void> {
  await trx
    .insertInto('profile_hooks')
    .columns(['profile_id', 'hooks'])
    .expression((eb) =>
      eb
        .selectFrom('profile_hooks')
        .select([eb.val(name).as('profile_id'), 'hooks'])
        .where('profile_id', '=', from),
    )
    .execute();
}
