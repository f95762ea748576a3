import type { Transaction } from 'kysely';
import type { Database, Db } from '@herald/db';
import { profileServersSchema } from './server-config.ts';
import type { ServerMap } from './server-config.ts';

/** A profile's own servers as stored; an entry that no longer validates is left out, never widened. */
export async function loadProfileServers(db: Db, profileId: string): Promise<ServerMap> {
  const row = await db.selectFrom('profile_mcp_servers').select('servers').where('profile_id', '=', profileId).executeTakeFirst();
  if (!row) return {};
  const parsed = profileServersSchema.safeParse({ servers: row.servers });
  return parsed.success ? parsed.data.servers : {};
}

/** Replaces a profile's servers (validated by the caller with profileServersSchema and profileServerProblems). */
export async function saveProfileServers(trx: Transaction<Database>, profileId: string, servers: ServerMap): Promise<void> {
  await trx
    .insertInto('profile_mcp_servers')
    .values({ profile_id: profileId, servers: JSON.stringify(servers) })
    .onConflict((oc) => oc.column('profile_id').doUpdateSet({ servers: JSON.stringify(servers), updated_at: new Date() }))
    .execute();
}
