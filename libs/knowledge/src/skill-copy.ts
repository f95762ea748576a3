import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import type { Database } from '@herald/db';

/**
 * Gives profile `name` `from`'s live skills with their history, in the transaction that creates it
 * (createProfile's copy). Files are shared by hash (skill_blobs), so nothing is duplicated; deleted
 * skills stay behind.
 */
export async function copyProfileSkills(trx: Transaction<Database>, name: string, from: string): Promise<void> {
  await sql`INSERT INTO skills (profile_id, name, version, description, category, tags, pinned, created_by, created_at, updated_at)
    SELECT ${name}, name, version, description, category, tags, pinned, created_by, created_at, updated_at
    FROM skills WHERE profile_id = ${from} AND deleted_at IS NULL`.execute(trx);
  await sql`INSERT INTO skill_versions (profile_id, name, version, files, action, author, note, created_at)
    SELECT ${name}, v.name, v.version, v.files, v.action, v.author, v.note, v.created_at
    FROM skill_versions v JOIN skills s ON s.profile_id = v.profile_id AND s.name = v.name
    WHERE v.profile_id = ${from} AND s.deleted_at IS NULL`.execute(trx);
}
