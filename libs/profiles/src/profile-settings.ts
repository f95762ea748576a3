import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '@herald/db';

// A profile's own settings and context documents, read and written here for the ingress's profile
// routes and the CLI's `herald profile`, `herald profiles show` and `herald tools policy` alike.

type Executor = Kysely<Database> | Transaction<Database>;

/** A profile's stored row (deleted ones included: their records stay readable). */
export type ProfileRecord = Selectable<Database['profiles']>;

export async function profileRecord(db: Executor, id: string): Promise<ProfileRecord | undefined> {
  return db.selectFrom('profiles').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The settings a person may change; the two policies are JSON, already validated by the caller. */
export interface ProfileSettings {
  display_name?: string | undefined;
  identity?: string | undefined;
  memory_char_limit?: number | undefined;
  user_char_limit?: number | undefined;
  memory_review_interval?: number | undefined;
  skill_review_interval?: number | undefined;
  search_shared_chat_types?: string[] | undefined;
  memory_shared?: boolean | undefined;
  tool_policy?: unknown;
  session_reset?: unknown;
}

/**
 * Changes the settings given (an undefined one stays as it is), in the caller's transaction when it
 * passes one (an audited change). Other processes' profile caches hear of it by NOTIFY.
 */
export async function updateProfileSettings(db: Executor, id: string, settings: ProfileSettings): Promise<void> {
  const { tool_policy: policy, session_reset: reset, ...rest } = settings;
  // kysely leaves an undefined value out of the SET list.
  const set = {
    ...rest,
    ...(policy === undefined ? {} : { tool_policy: JSON.stringify(policy) }),
    ...(reset === undefined ? {} : { session_reset: JSON.stringify(reset) }),
  };
  if (Object.values(set).every((value) => value === undefined)) return;
  await db.updateTable('profiles').set(set).where('id', '=', id).execute();
}

/** One context document of a profile (AGENTS.md and the like), put into its system prompt. */
export interface ProfileDocument {
  name: string;
  content: string;
  updatedAt: Date;
}

/** A profile's context documents, in name order. */
export async function profileDocuments(db: Executor, profileId: string): Promise<ProfileDocument[]> {
  const rows = await db.selectFrom('profile_documents').select(['name', 'content', 'updated_at']).where('profile_id', '=', profileId).orderBy('name').execute();
  return rows.map((row) => ({ name: row.name, content: row.content, updatedAt: row.updated_at }));
}

/** Writes a context document, replacing one of the same name; new sessions use it. */
export async function putProfileDocument(db: Executor, profileId: string, name: string, content: string): Promise<void> {
  await db
    .insertInto('profile_documents')
    .values({ profile_id: profileId, name, content })
    .onConflict((oc) => oc.columns(['profile_id', 'name']).doUpdateSet({ content, updated_at: new Date() }))
    .execute();
}

/** Deletes a context document; false when there was none of that name. */
export async function deleteProfileDocument(db: Executor, profileId: string, name: string): Promise<boolean> {
  const result = await db.deleteFrom('profile_documents').where('profile_id', '=', profileId).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
