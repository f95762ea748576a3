import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** Reading a profile's skills; writes go through applySkillChange (skill-change.ts). */

type Executor = Kysely<Database> | Transaction<Database>;

/** Who is writing: reviews get extra guards (pinned skills, read before write). */
export type SkillOrigin = 'session' | 'review' | 'person' | 'import' | 'builtin';

/**
 * Who is reading: a person sees the profile's shared skills and their own (docs/security.md,
 * "Skills: who sees what"); `person: null` (a group chat's prompt) sees the shared ones only.
 * Operators' reads (API, CLI) pass no viewer and see every skill.
 */
export interface SkillViewer {
  person: string | null;
}

export interface SkillSummary {
  name: string;
  description: string;
  category: string | null;
  tags: string[];
  version: number;
  pinned: boolean;
  createdBy: string;
  updatedAt: Date;
  /** Visible to everyone in the profile; else only to `ownerId`. */
  shared: boolean;
  /** The person whose session or chat wrote it; null for an operator's (API, CLI, import). */
  ownerId: string | null;
  /** Herald's built-in skill this copy came from, or null for the profile's own skill. */
  builtin: { version: number; edited: boolean; offeredVersion: number | null } | null;
}

export const sha256 = (content: Buffer) => createHash('sha256').update(content).digest('hex');

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The file as text, or undefined when it is not valid UTF-8 (an image in assets/, say). */
export function skillText(content: Buffer): string | undefined {
  try {
    return decoder.decode(content);
  } catch {
    return undefined;
  }
}

export function viewedKey(name: string, path: string): string {
  return `${name}/${path}`;
}

function summaryOf(row: {
  name: string;
  description: string;
  category: string | null;
  tags: string[];
  version: number;
  pinned: boolean;
  created_by: string;
  updated_at: Date;
  shared: boolean;
  owner_id: string | null;
  builtin_version: number | null;
  builtin_seeded_version: number | null;
  offered_builtin_version: number | null;
}): SkillSummary {
  return {
    name: row.name,
    description: row.description,
    category: row.category,
    tags: row.tags,
    version: row.version,
    pinned: row.pinned,
    createdBy: row.created_by,
    updatedAt: row.updated_at,
    shared: row.shared,
    ownerId: row.owner_id,
    builtin: row.builtin_version === null ? null : { version: row.builtin_version, edited: row.version !== row.builtin_seeded_version, offeredVersion: row.offered_builtin_version },
  };
}

const SUMMARY_COLUMNS = [
  'name',
  'description',
  'category',
  'tags',
  'version',
  'pinned',
  'created_by',
  'updated_at',
  'shared',
  'owner_id',
  'builtin_version',
  'builtin_seeded_version',
  'offered_builtin_version',
] as const;

/** The condition on `skills` of what `viewer` may see; no viewer: everything. */
export function visibleTo(viewer: SkillViewer | undefined) {
  return (eb: ExpressionBuilder<Database, 'skills'>) =>
    viewer === undefined ? eb.lit(true) : viewer.person === null ? eb('shared', '=', true) : eb.or([eb('shared', '=', true), eb('owner_id', '=', viewer.person)]);
}

/** The profile's live skills `viewer` may see, by category then name. */
export async function listSkills(db: Executor, profileId: string, viewer?: SkillViewer): Promise<SkillSummary[]> {
  const rows = await db
    .selectFrom('skills')
    .select(SUMMARY_COLUMNS)
    .where('profile_id', '=', profileId)
    .where('deleted_at', 'is', null)
    .where(visibleTo(viewer))
    .orderBy(sql`coalesce(category, '')`)
    .orderBy('name')
    .execute();
  return rows.map(summaryOf);
}

export async function getSkill(db: Executor, profileId: string, name: string, viewer?: SkillViewer): Promise<SkillSummary | undefined> {
  const row = await db
    .selectFrom('skills')
    .select(SUMMARY_COLUMNS)
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .where(visibleTo(viewer))
    .executeTakeFirst();
  return row ? summaryOf(row) : undefined;
}

/** The files of one version (the current one by default), path -> content. */
export async function readSkillFiles(db: Executor, profileId: string, name: string, version?: number, viewer?: SkillViewer): Promise<Map<string, Buffer> | undefined> {
  const skill = await db.selectFrom('skills').select(['version', 'deleted_at']).where('profile_id', '=', profileId).where('name', '=', name).where(visibleTo(viewer)).executeTakeFirst();
  if (!skill || (version === undefined && skill.deleted_at !== null)) return undefined;
  const row = await db
    .selectFrom('skill_versions')
    .select('files')
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .where('version', '=', version ?? skill.version)
    .executeTakeFirst();
  if (!row) return undefined;
  const manifest = row.files;
  const hashes = [...new Set(Object.values(manifest))];
  const blobs = hashes.length === 0 ? [] : await db.selectFrom('skill_blobs').select(['sha256', 'content']).where('sha256', 'in', hashes).execute();
  const byHash = new Map(blobs.map((blob) => [blob.sha256, blob.content]));
  const files = new Map<string, Buffer>();
  for (const path of Object.keys(manifest).sort()) {
    const content = byHash.get(manifest[path]!);
    if (content !== undefined) files.set(path, content);
  }
  return files;
}

/** The newer built-in version kept beside an edited copy, path -> content; undefined when none. */
export async function readOfferedBuiltin(db: Executor, profileId: string, name: string): Promise<{ version: number; files: Map<string, Buffer> } | undefined> {
  const row = await db
    .selectFrom('skills')
    .select(['offered_builtin_version', 'offered_builtin_files'])
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row || row.offered_builtin_version === null || row.offered_builtin_files === null) return undefined;
  const manifest = row.offered_builtin_files as Record<string, string>;
  const hashes = [...new Set(Object.values(manifest))];
  const blobs = hashes.length === 0 ? [] : await db.selectFrom('skill_blobs').select(['sha256', 'content']).where('sha256', 'in', hashes).execute();
  const byHash = new Map(blobs.map((blob) => [blob.sha256, blob.content]));
  const files = new Map<string, Buffer>();
  for (const path of Object.keys(manifest).sort()) {
    const content = byHash.get(manifest[path]!);
    if (content !== undefined) files.set(path, content);
  }
  return { version: row.offered_builtin_version, files };
}

export async function skillHistory(db: Executor, profileId: string, name: string) {
  const rows = await db
    .selectFrom('skill_versions')
    .select(['version', 'action', 'author', 'note', 'created_at', 'files'])
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .orderBy('version', 'desc')
    .execute();
  return rows.map((row) => ({
    version: row.version,
    action: row.action,
    author: row.author,
    note: row.note,
    createdAt: row.created_at,
    files: Object.keys(row.files).sort(),
  }));
}

/** Pins or unpins; false when there is no such skill. */
export async function setSkillPinned(db: Executor, profileId: string, name: string, pinned: boolean): Promise<boolean> {
  const result = await db
    .updateTable('skills')
    .set({ pinned, updated_at: sql`clock_timestamp()` })
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Shares a skill with everyone in its profile, or takes it back to its owner: an operator's act
 * (the API, `herald skills share`, the console), which the audit trail records with the operator
 * as actor (herald_audit_skill_share). False when there is no such live skill.
 */
export async function setSkillShared(db: Executor, profileId: string, name: string, shared: boolean): Promise<boolean> {
  const result = await db
    .updateTable('skills')
    .set({ shared, updated_at: sql`clock_timestamp()` })
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
