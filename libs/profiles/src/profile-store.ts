import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import { withAudit } from '@herald/audit';
import { bindingsOfProfile } from './profile-bindings.ts';
import type { ProfileBinding } from './profile-bindings.ts';
import { storedModelSettings } from './model-settings.ts';
import type { ModelSettings } from './model-settings.ts';
import { MAIN_PROFILE } from './profile-name.ts';

// The one place profiles are listed, created, deleted and given models: the ingress routes and
// the `herald profiles` commands both call these, so both refuse and copy the same way.

type Db = Kysely<Database>;

/** A profile as listed: its name, display name, models (null: the deployment's) and bindings. */
export interface ProfileSummary {
  /** The profile's name, as `POST /v1/profiles` takes it; `profile` repeats it as the other views name it. */
  name: string;
  profile: string;
  display_name: string;
  created_at: string;
  model: ModelSettings | null;
  bindings: ProfileBinding[];
}

/** Whether a name is a profile that takes messages ('active'), one deleted, or none at all. */
export async function profileState(db: Db, id: string): Promise<'active' | 'deleted' | 'missing'> {
  const row = await db.selectFrom('profiles').select('deleted_at').where('id', '=', id).executeTakeFirst();
  if (!row) return 'missing';
  return row.deleted_at === null ? 'active' : 'deleted';
}

/** Whether `id` names a profile, deleted or not (its records stay readable). */
export async function profileExists(db: Db, id: string): Promise<boolean> {
  return (await profileState(db, id)) !== 'missing';
}

/** The profiles that take messages, in name order. */
export async function activeProfileIds(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('profiles').select('id').where('deleted_at', 'is', null).orderBy('id').execute();
  return rows.map((row) => row.id);
}

export async function listProfiles(db: Db): Promise<ProfileSummary[]> {
  const rows = await db.selectFrom('profiles').select(['id', 'display_name', 'created_at', 'model']).where('deleted_at', 'is', null).orderBy('id').execute();
  return Promise.all(
    rows.map(async (row) => ({
      name: row.id,
      profile: row.id,
      display_name: row.display_name,
      created_at: row.created_at.toISOString(),
      model: storedModelSettings(row.model),
      bindings: await bindingsOfProfile(db, row.id),
    })),
  );
}

/** A profile's own models, null when it uses the deployment's (HERALD_MODEL and friends). */
export async function profileModelSettings(db: Db, id: string): Promise<ModelSettings | null> {
  const row = await db.selectFrom('profiles').select('model').where('id', '=', id).executeTakeFirst();
  return storedModelSettings(row?.model);
}

export async function setProfileModel(db: Db, id: string, model: ModelSettings | null, actor: string): Promise<void> {
  await withAudit(db, async (trx) => {
    await trx
      .updateTable('profiles')
      .set({ model: model === null ? null : JSON.stringify(model) })
      .where('id', '=', id)
      .execute();
    return { result: undefined, audit: { kind: 'admin_change', actor, profileId: id, subject: `profile:${id}`, detail: { fields: ['model'], model } } };
  });
}

export type CreateOutcome = { kind: 'created' } | { kind: 'exists' } | { kind: 'no_source' };

/**
 * What other libs keep per profile, copied with it and stopped with it in the profile's own
 * transaction: its hooks and skills (libs/hooks, libs/knowledge), its cron jobs (libs/cron), and
 * Herald's built-in skills given to every new profile. Those
 * libs own their tables and sit beside or above this one, so the caller composes their functions
 * (`COMPANIONS` in the ingress's profile routes and the CLI's profiles command); required, so no caller copies half a profile.
 */
export interface ProfileCompanions {
  copy(trx: Transaction<Database>, name: string, from: string): Promise<void>;
  /** What every new profile starts with, after its copy if it is one: Herald's built-in skills (libs/knowledge). */
  seed(trx: Transaction<Database>, name: string): Promise<void>;
  retire(trx: Transaction<Database>, name: string): Promise<void>;
}

/** Copies what makes `from` the agent it is: settings, identity, models, documents, then the companions' rows (hooks and skills). */
async function copyProfile(trx: Transaction<Database>, name: string, from: string, companions: ProfileCompanions): Promise<void> {
  await sql`INSERT INTO profiles (id, display_name, identity, memory_char_limit, user_char_limit, search_shared_chat_types,
      tool_policy, memory_review_interval, skill_review_interval, memory_shared, session_reset, model)
    SELECT ${name}, ${name}, identity, memory_char_limit, user_char_limit, search_shared_chat_types,
      tool_policy, memory_review_interval, skill_review_interval, memory_shared, session_reset, model
    FROM profiles WHERE id = ${from}`.execute(trx);
  await sql`INSERT INTO profile_documents (profile_id, name, content)
    SELECT ${name}, name, content FROM profile_documents WHERE profile_id = ${from}`.execute(trx);
  await companions.copy(trx, name, from);
}

/**
 * Creates `name`, empty or as a copy of `from` (never its memory, sessions or history). A name
 * taken by a deleted profile stays taken: that profile's sessions still carry it.
 */
export async function createProfile(db: Db, name: string, from: string | undefined, actor: string, companions: ProfileCompanions): Promise<CreateOutcome> {
  return withAudit<CreateOutcome>(db, async (trx) => {
    const audit = { kind: 'admin_change' as const, actor, profileId: name, subject: `profile:${name}`, detail: { action: 'create', from: from ?? null } };
    const taken = await trx.selectFrom('profiles').select('id').where('id', '=', name).forUpdate().executeTakeFirst();
    if (taken) return { result: { kind: 'exists' as const }, audit: [] };
    if (from !== undefined) {
      const source = await trx.selectFrom('profiles').select('id').where('id', '=', from).where('deleted_at', 'is', null).executeTakeFirst();
      if (!source) return { result: { kind: 'no_source' as const }, audit: [] };
      await copyProfile(trx, name, from, companions);
    } else {
      await trx.insertInto('profiles').values({ id: name, display_name: name }).execute();
    }
    await companions.seed(trx, name);
    return { result: { kind: 'created' as const }, audit };
  }).catch((error: unknown): CreateOutcome => {
    // Two creations of one name at once: the loser sees the primary key.
    if ((error as { code?: string }).code === '23505') return { kind: 'exists' };
    throw error;
  });
}

export type DeleteOutcome = { kind: 'deleted' } | { kind: 'missing' } | { kind: 'main' } | { kind: 'bound'; bindings: ProfileBinding[] };

/**
 * Deletes softly: the profile takes no new messages and is not listed, while its sessions,
 * transcripts, memory and skills stay readable. `main` and a profile traffic is bound to stay.
 */
export async function deleteProfile(db: Db, name: string, actor: string, companions: ProfileCompanions): Promise<DeleteOutcome> {
  if (name === MAIN_PROFILE) return { kind: 'main' };
  if ((await profileState(db, name)) !== 'active') return { kind: 'missing' };
  const bindings = await bindingsOfProfile(db, name);
  if (bindings.length > 0) return { kind: 'bound', bindings };
  return withAudit<DeleteOutcome>(db, async (trx) => {
    const result = await trx.updateTable('profiles').set({ deleted_at: new Date() }).where('id', '=', name).where('deleted_at', 'is', null).executeTakeFirst();
    const deleted = Number(result.numUpdatedRows) > 0;
    // Its cron jobs would start new turns: they stop with it (and stay listed, paused).
    if (deleted) await companions.retire(trx, name);
    const audit = deleted ? { kind: 'admin_change' as const, actor, profileId: name, subject: `profile:${name}`, detail: { action: 'delete' } } : [];
    return { result: deleted ? { kind: 'deleted' as const } : { kind: 'missing' as const }, audit };
  });
}
