import type { Kysely } from 'kysely';
import type { Database } from '@herald/db';
import { visibleTo } from './skill-store.ts';

export interface PromptSources {
  memory: string[];
  user: string[];
  documents: { name: string; content: string }[];
  /** The skills index: name and description only; a skill's body enters a conversation via skill_view. */
  skills: { name: string; description: string; category: string | null }[];
}

/** Chat types where several people share one session (and so one system prompt). */
const SHARED_CHAT_TYPES: readonly string[] = ['group', 'channel'];

/**
 * Whose memory a new session's prompt may carry. A person's own notes and user profile enter only
 * a session that person alone talks in: a group chat's prompt is everyone's, so it gets the
 * profile-wide notes only.
 */
export function promptPerson(chatType: string, userId: string | null): string | null {
  return SHARED_CHAT_TYPES.includes(chatType) || userId === null || userId === '' ? null : userId;
}

/**
 * What the system prompt of a new session is built from: the memory snapshot and context documents.
 * `person` is `promptPerson`'s answer: null leaves every personal entry out.
 */
export async function loadPromptSources(db: Kysely<Database>, profileId: string, person: string | null): Promise<PromptSources> {
  const owners = person === null ? [''] : ['', person];
  const [entries, documents, skills] = await Promise.all([
    db.selectFrom('memory_entries').select(['store', 'content']).where('profile_id', '=', profileId).where('user_id', 'in', owners).orderBy('id').execute(),
    db.selectFrom('profile_documents').select(['name', 'content']).where('profile_id', '=', profileId).orderBy('name').execute(),
    db
      .selectFrom('skills')
      .select(['name', 'description', 'category'])
      .where('profile_id', '=', profileId)
      .where('deleted_at', 'is', null)
      // Shared skills, and the person's own: another person's unshared skill never enters this prompt.
      .where(visibleTo({ person }))
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
