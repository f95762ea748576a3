import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import type { Database } from '@herald/db';

/**
 * Gives profile `name` `from`'s live skills with their history, in the transaction that creates it
 * (createProfile's copy). Files are shared by hash (skill_blobs), so nothing is duplicated; deleted
 * skills stay behind, except a removed built-in: its row goes along so the copy is not seeded with
 * it again. The builtin columns go along too, so the copy's built-ins stay built-ins: listed as
 * such, updated on upgrade unless edited (the version numbers are kept, so "edited" is too).
 */
export async function copyProfileSkills(trx: Transaction<Database>, name: string, from: string): Promise<void> {
  await sql`INSERT INTO skills (profile_id, name, version, description, category, tags, pinned, created_by, deleted_at, created_at, updated_at,
      builtin_version, builtin_seeded_version, offered_builtin_version, offered_builtin_files)
    SELECT ${name}, name, version, description, category, tags, pinned, created_by, deleted_at, created_at, updated_at,
      builtin_version, builtin_seeded_version, offered_builtin_version, offered_builtin_files
    FROM skills WHERE profile_id = ${from} AND (deleted_at IS NULL OR builtin_version IS NOT NULL)`.execute(trx);
  await sql`INSERT INTO skill_versions (profile_id, name, version, files, action, author, note, created_at)
    SELECT ${name}, v.name, v.version, v.files, v.action, v.author, v.note, v.created_at
    FROM skill_versions v JOIN skills s ON s.profile_id = v.profile_id AND s.name = v.name
    WHERE v.profile_id = ${from} AND (s.deleted_at IS NULL OR s.builtin_version IS NOT NULL)`.execute(trx);
}
