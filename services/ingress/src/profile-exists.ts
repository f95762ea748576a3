import type { Db } from '@herald/db';

/** Whether a profile id names a profile: routes under /v1/profiles/:profile answer 404 when not. */
export async function profileExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('profiles').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Every profile's id, in name order: the models the OpenAI-compatible endpoint offers. */
export async function profileIds(db: Db): Promise<string[]> {
  return (await db.selectFrom('profiles').select('id').orderBy('id').execute()).map((row) => row.id);
}
