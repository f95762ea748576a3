import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database, MemoryStore } from '@herald/db';

export interface MemoryEntry {
  id: string;
  content: string;
}

export interface MemoryState {
  store: MemoryStore;
  entries: MemoryEntry[];
  chars: number;
  limit: number;
}

export interface MemoryOperation {
  action: 'add' | 'replace' | 'remove';
  content?: string | undefined;
  old_text?: string | undefined;
}

export interface MemoryScope {
  profileId: string;
  store: MemoryStore;
  /**
   * The person writing or reading (qualified, `telegram:42`); '' for the profile-wide notes that
   * people manage through the API and the CLI.
   */
  userId: string;
}

export type MemoryWriteResult = { ok: true; state: MemoryState } | { ok: false; error: string; state: MemoryState };

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * Whose entries a scope reads and writes. The user store is always the person's. The agent's notes
 * (store `memory`) are the person's own too, unless the operator made the profile's notes shared
 * (`profiles.memory_shared`): otherwise one person's write would enter the prompts of everyone else
 * the profile talks to. '' is the profile-wide set.
 */
function ownerOf(scope: MemoryScope, memoryShared: boolean): string {
  if (scope.store === 'user') return scope.userId;
  return memoryShared ? '' : scope.userId;
}

async function profileSettings(db: Executor, profileId: string) {
  return db.selectFrom('profiles').select(['memory_char_limit', 'user_char_limit', 'memory_shared']).where('id', '=', profileId).executeTakeFirst();
}

export function usageOf(entries: { content: string }[]): number {
  return entries.reduce((sum, entry) => sum + entry.content.length, 0);
}

export async function readMemory(db: Executor, scope: MemoryScope): Promise<MemoryState> {
  const profile = await profileSettings(db, scope.profileId);
  return readOwned(db, scope, ownerOf(scope, profile?.memory_shared ?? false), profile);
}

/**
 * The entries a scope's person owns, whatever the sharing setting: with `memory_shared` on, a
 * person's own notes (written while it was off) are kept but out of every prompt, and an operator
 * still needs to see and delete them. `userId` '' is the profile-wide set.
 */
export async function readOwnMemory(db: Executor, scope: MemoryScope): Promise<MemoryState> {
  return readOwned(db, scope, scope.userId, await profileSettings(db, scope.profileId));
}

async function readOwned(db: Executor, scope: MemoryScope, owner: string, profile: Awaited<ReturnType<typeof profileSettings>>): Promise<MemoryState> {
  const rows = await db
    .selectFrom('memory_entries')
    .select(['id', 'content'])
    .where('profile_id', '=', scope.profileId)
    .where('store', '=', scope.store)
    .where('user_id', '=', owner)
    .orderBy('id')
    .execute();
  const entries = rows.map((row) => ({ id: String(row.id), content: row.content }));
  const limit = scope.store === 'memory' ? (profile?.memory_char_limit ?? 2200) : (profile?.user_char_limit ?? 1375);
  return { store: scope.store, entries, chars: usageOf(entries), limit };
}

function preview(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

type Draft = { id: string | null; content: string };

function applyOne(draft: Draft[], operation: MemoryOperation): string | undefined {
  const content = operation.content?.trim();
  if (operation.action === 'add') {
    if (!content) return "add needs 'content'";
    if (!draft.some((entry) => entry.content === content)) draft.push({ id: null, content });
    return undefined;
  }
  const needle = operation.old_text?.trim();
  if (!needle) return `${operation.action} needs 'old_text', a short piece of the entry to change`;
  const matches = draft.filter((entry) => entry.content.includes(needle));
  if (matches.length === 0) return `no entry contains '${preview(needle)}'`;
  const distinct = new Set(matches.map((entry) => entry.content));
  if (distinct.size > 1) {
    return `'${preview(needle)}' matches ${distinct.size} entries; use a longer piece of one of them: ${[...distinct].map((text) => `"${preview(text)}"`).join(', ')}`;
  }
  const target = matches[0]!;
  if (operation.action === 'remove') {
    draft.splice(draft.indexOf(target), 1);
    return undefined;
  }
  if (!content) return "replace needs 'content', the new text of the entry";
  target.content = content;
  return undefined;
}

/**
 * Applies a batch of operations all-or-nothing, with the character limit checked on the final state.
 * A transaction-scoped advisory lock per store serialises writers, so two workers writing the same
 * store at once never lose a write. The caller runs this inside its (fenced) transaction.
 */
export async function writeMemory(trx: Transaction<Database>, scope: MemoryScope, operations: MemoryOperation[]): Promise<MemoryWriteResult> {
  const profile = await profileSettings(trx, scope.profileId);
  const owner = ownerOf(scope, profile?.memory_shared ?? false);
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`memory:${scope.profileId}:${scope.store}:${owner}`}))`.execute(trx);
  const current = await readOwned(trx, scope, owner, profile);
  const draft: Draft[] = current.entries.map((entry) => ({ ...entry }));
  for (const [index, operation] of operations.entries()) {
    const error = applyOne(draft, operation);
    if (error !== undefined) {
      const where = operations.length > 1 ? `operation ${index + 1} (${operation.action}): ` : '';
      return { ok: false, error: `${where}${error}. Nothing was changed.`, state: current };
    }
  }
  const chars = usageOf(draft);
  if (chars > current.limit) {
    return {
      ok: false,
      error:
        `${scope.store === 'memory' ? 'Memory' : 'The user profile'} would use ${chars} of ${current.limit} characters. ` +
        'Nothing was changed. Consolidate: replace several entries with one shorter entry, or remove ones that no longer matter, then retry.',
      state: current,
    };
  }
  const kept = new Set(draft.flatMap((entry) => (entry.id === null ? [] : [entry.id])));
  const removed = current.entries.filter((entry) => !kept.has(entry.id)).map((entry) => entry.id);
  if (removed.length > 0)
    await trx
      .deleteFrom('memory_entries')
      .where(sql<boolean>`id = ANY(${removed}::bigint[])`)
      .execute();
  for (const entry of draft) {
    const before = current.entries.find((old) => old.id === entry.id);
    if (entry.id === null) {
      await trx.insertInto('memory_entries').values({ profile_id: scope.profileId, store: scope.store, user_id: owner, content: entry.content }).execute();
    } else if (before && before.content !== entry.content) {
      await trx
        .updateTable('memory_entries')
        .set({ content: entry.content, updated_at: sql`clock_timestamp()` })
        .where(sql<boolean>`id = ${entry.id}::bigint`)
        .execute();
    }
  }
  return { ok: true, state: await readOwned(trx, scope, owner, profile) };
}

/** Removes one entry by id (people editing memory through the API or CLI). */
export async function deleteMemoryEntry(db: Executor, profileId: string, entryId: string): Promise<boolean> {
  if (!/^\d+$/.test(entryId)) return false;
  const result = await db
    .deleteFrom('memory_entries')
    .where(sql<boolean>`id = ${entryId}::bigint`)
    .where('profile_id', '=', profileId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Whose entry it is ('' for the profile's shared notes), for the API's permission check; undefined
 * when the profile has no such entry.
 */
export async function memoryEntryOwner(db: Executor, profileId: string, entryId: string): Promise<string | undefined> {
  if (!/^[1-9][0-9]{0,17}$/.test(entryId)) return undefined;
  const row = await db
    .selectFrom('memory_entries')
    .select('user_id')
    .where(sql<boolean>`id = ${entryId}::bigint`)
    .where('profile_id', '=', profileId)
    .executeTakeFirst();
  return row?.user_id;
}
