import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';

export interface PromptSources {
  memory: string[];
  user: string[];
  documents: { name: string; content: string }[];
  /** The skills index: name and description only; a skill's body enters a conversation via skill_view. */
  skills: { name: string; description: string; category: string | null }[];
}

/** What the system prompt of a new session is built from: the memory snapshot and context documents. */
export async function loadPromptSources(db: Kysely<Database>, profileId: string, userId: string): Promise<PromptSources> {
  const [entries, documents, skills] = await Promise.all([
    db
      .selectFrom('memory_entries')
      .select(['store', 'content'])
      .where('profile_id', '=', profileId)
      .where((eb) => eb.or([eb('store', '=', 'memory'), eb.and([eb('store', '=', 'user'), eb('user_id', '=', userId)])]))
      .orderBy('id')
      .execute(),
    db.selectFrom('profile_documents').select(['name', 'content']).where('profile_id', '=', profileId).orderBy('name').execute(),
    db
      .selectFrom('skills')
      .select(['name', 'description', 'category'])
      .where('profile_id', '=', profileId)
      .where('deleted_at', 'is', null)
      .orderBy('name')
      .execute(),
  ]);
  return {
    memory: entries.filter((e) => e.store === 'memory').map((e) => e.content),
    user: entries.filter((e) => e.store === 'user').map((e) => e.content),
    documents,
    skills,
  };
}
