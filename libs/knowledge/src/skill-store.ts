import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import {
  parseSkillMd,
  SKILL_FILE_MAX_BYTES,
  SKILL_MD,
  SKILL_MD_MAX_CHARS,
  skillNameError,
  supportPathError,
} from './skill-format.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** Who is writing: reviews get extra guards (pinned skills, read before write). */
export type SkillOrigin = 'session' | 'review' | 'person' | 'import';

export interface SkillSummary {
  name: string;
  description: string;
  category: string | null;
  tags: string[];
  version: number;
  pinned: boolean;
  createdBy: string;
  updatedAt: Date;
}

export type SkillChange =
  | { action: 'create'; name: string; content: string; category?: string | undefined }
  | {
      action: 'patch';
      name: string;
      old_string: string;
      new_string: string;
      file_path?: string | undefined;
      replace_all?: boolean | undefined;
    }
  | { action: 'edit'; name: string; content: string }
  | { action: 'delete'; name: string; absorbed_into?: string | undefined }
  | { action: 'write_file'; name: string; file_path: string; file_content: string }
  | { action: 'remove_file'; name: string; file_path: string }
  /** A whole tree from a person (API or CLI import): creates the skill or replaces all its files. */
  | { action: 'import'; name: string; files: Record<string, Buffer> };

export interface SkillWriteOptions {
  origin: SkillOrigin;
  /** 'session:<id>', 'review:<id>', 'api', 'cli': kept on the version. */
  author: string;
  /** Injection scanner: returns why a text looks like prompt injection, or undefined. */
  scan(text: string): string | undefined;
  /** Review only: the files viewed in this review, as `name/path`; existing files must be viewed first. */
  viewed?: ReadonlySet<string>;
}

export type SkillWriteResult =
  | { ok: true; name: string; version: number; message: string }
  | { ok: false; error: string };

const sha256 = (content: Buffer) => createHash('sha256').update(content).digest('hex');

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
  };
}

const SUMMARY_COLUMNS = ['name', 'description', 'category', 'tags', 'version', 'pinned', 'created_by', 'updated_at'] as const;

/** The profile's live skills, by category then name. */
export async function listSkills(db: Executor, profileId: string): Promise<SkillSummary[]> {
  const rows = await db
    .selectFrom('skills')
    .select(SUMMARY_COLUMNS)
    .where('profile_id', '=', profileId)
    .where('deleted_at', 'is', null)
    .orderBy(sql`coalesce(category, '')`)
    .orderBy('name')
    .execute();
  return rows.map(summaryOf);
}

export async function getSkill(db: Executor, profileId: string, name: string): Promise<SkillSummary | undefined> {
  const row = await db
    .selectFrom('skills')
    .select(SUMMARY_COLUMNS)
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row ? summaryOf(row) : undefined;
}

/** The files of one version (the current one by default), path -> content. */
export async function readSkillFiles(
  db: Executor,
  profileId: string,
  name: string,
  version?: number,
): Promise<Map<string, Buffer> | undefined> {
  const skill = await db
    .selectFrom('skills')
    .select(['version', 'deleted_at'])
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .executeTakeFirst();
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
  const blobs =
    hashes.length === 0 ? [] : await db.selectFrom('skill_blobs').select(['sha256', 'content']).where('sha256', 'in', hashes).execute();
  const byHash = new Map(blobs.map((blob) => [blob.sha256, blob.content]));
  const files = new Map<string, Buffer>();
  for (const path of Object.keys(manifest).sort()) {
    const content = byHash.get(manifest[path]!);
    if (content !== undefined) files.set(path, content);
  }
  return files;
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

function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

class Refusal extends Error {}

const refuse = (message: string): never => {
  throw new Refusal(message);
};

/** Checks every file of the new state; returns the parsed SKILL.md metadata. */
function validateTree(name: string, files: Map<string, Buffer>, changed: ReadonlySet<string>, options: SkillWriteOptions) {
  const skillMd = files.get(SKILL_MD);
  if (skillMd === undefined) refuse('the skill has no SKILL.md');
  const text = skillText(skillMd!) ?? refuse('SKILL.md is not valid UTF-8 text');
  if (text.length > SKILL_MD_MAX_CHARS) refuse(`SKILL.md is ${text.length} characters; the limit is ${SKILL_MD_MAX_CHARS}`);
  const parsed = parseSkillMd(text);
  if (!parsed.ok) return refuse(parsed.error);
  if (parsed.meta.name !== name) refuse(`the frontmatter name '${parsed.meta.name}' differs from the skill name '${name}'`);
  for (const [path, content] of files) {
    const pathError = supportPathError(path);
    if (pathError) refuse(pathError);
    if (content.length > SKILL_FILE_MAX_BYTES) refuse(`${path} is ${content.length} bytes; the limit is ${SKILL_FILE_MAX_BYTES} (1 MiB)`);
    if (!changed.has(path)) continue;
    const fileText = skillText(content);
    if (fileText === undefined) continue;
    const reason = options.scan(fileText);
    if (reason !== undefined) {
      refuse(`${path} was refused by the security scan (${reason}); nothing was changed. Rewrite it without that content.`);
    }
  }
  return parsed.meta;
}

/**
 * Applies one change to a profile's skill all or nothing: the new state of every file is validated
 * (frontmatter, limits, paths) and scanned for injection before anything is written, and the write
 * is a new version (every version is kept). An advisory lock per skill serialises writers, so two
 * sessions patching the same skill never lose an edit. The caller runs this inside its (fenced)
 * transaction, which rolls back if anything after the checks fails.
 */
export async function applySkillChange(
  trx: Transaction<Database>,
  profileId: string,
  change: SkillChange,
  options: SkillWriteOptions,
): Promise<SkillWriteResult> {
  const nameError = skillNameError(change.name);
  if (nameError) return { ok: false, error: nameError };
  const name = change.name;
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`skill:${profileId}:${name}`}))`.execute(trx);
  const row = await trx
    .selectFrom('skills')
    .select(['version', 'pinned', 'deleted_at', 'category'])
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .executeTakeFirst();
  const live = row !== undefined && row.deleted_at === null;
  try {
    if (change.action === 'create' && live) {
      refuse(`a skill named '${name}' already exists; view it and patch it, or pick a name for a different class of task`);
    }
    if (change.action !== 'create' && change.action !== 'import' && !live) {
      refuse(`no skill named '${name}'; skills_list shows the existing ones`);
    }
    if (live && row.pinned && options.origin === 'review') {
      refuse(`the skill '${name}' is pinned by a person; background review may not change it`);
    }
    if (live && row.pinned && change.action === 'delete' && options.origin !== 'person') {
      refuse(`the skill '${name}' is pinned; a person must unpin it before it can be deleted`);
    }
    const current = live ? ((await readSkillFiles(trx, profileId, name)) ?? new Map<string, Buffer>()) : new Map<string, Buffer>();
    const mustHaveViewed = (path: string) => {
      if (options.origin !== 'review' || !current.has(path)) return;
      if (!options.viewed?.has(viewedKey(name, path))) {
        refuse(`view it first: call skill_view(name='${name}'${path === SKILL_MD ? '' : `, file_path='${path}'`}) before changing it`);
      }
    };
    const next = new Map(current);
    const changed = new Set<string>();
    let message: string;
    switch (change.action) {
      case 'create':
      case 'edit': {
        mustHaveViewed(SKILL_MD);
        next.set(SKILL_MD, Buffer.from(change.content, 'utf8'));
        changed.add(SKILL_MD);
        message = change.action === 'create' ? `created skill '${name}'` : `rewrote SKILL.md of '${name}'`;
        break;
      }
      case 'patch': {
        const path = change.file_path ?? SKILL_MD;
        const file = current.get(path) ?? refuse(`the skill '${name}' has no file '${path}'`);
        mustHaveViewed(path);
        const text = skillText(file) ?? refuse(`${path} is not text and cannot be patched`);
        if (change.old_string === '') refuse('old_string is empty; give the exact text to replace');
        const count = occurrences(text, change.old_string);
        if (count === 0) refuse(`old_string was not found in ${path}; view the file and copy the exact text`);
        if (count > 1 && change.replace_all !== true) {
          refuse(`old_string matches ${count} places in ${path}; include more surrounding text to make it unique, or set replace_all`);
        }
        next.set(path, Buffer.from(text.split(change.old_string).join(change.new_string), 'utf8'));
        changed.add(path);
        message = `patched ${path} of '${name}' (${change.replace_all === true ? count : 1} replacement${count > 1 && change.replace_all === true ? 's' : ''})`;
        break;
      }
      case 'write_file': {
        if (change.file_path === SKILL_MD) refuse("use action 'edit' or 'patch' for SKILL.md");
        mustHaveViewed(current.has(change.file_path) ? change.file_path : SKILL_MD);
        next.set(change.file_path, Buffer.from(change.file_content, 'utf8'));
        changed.add(change.file_path);
        message = `wrote ${change.file_path} in '${name}'`;
        break;
      }
      case 'remove_file': {
        if (change.file_path === SKILL_MD) refuse("SKILL.md cannot be removed; use action 'delete' for the whole skill");
        if (!current.has(change.file_path)) refuse(`the skill '${name}' has no file '${change.file_path}'`);
        mustHaveViewed(change.file_path);
        next.delete(change.file_path);
        message = `removed ${change.file_path} from '${name}'`;
        break;
      }
      case 'delete': {
        mustHaveViewed(SKILL_MD);
        next.clear();
        message = `deleted skill '${name}'${change.absorbed_into ? ` (absorbed into '${change.absorbed_into}')` : ''}`;
        break;
      }
      case 'import': {
        next.clear();
        for (const [path, content] of Object.entries(change.files)) {
          next.set(path, content);
          changed.add(path);
        }
        message = live ? `replaced the files of '${name}'` : `imported skill '${name}'`;
        break;
      }
    }
    const version = (row?.version ?? 0) + 1;
    if (change.action === 'delete') {
      await trx
        .updateTable('skills')
        .set({ version, deleted_at: sql`clock_timestamp()`, updated_at: sql`clock_timestamp()` })
        .where('profile_id', '=', profileId)
        .where('name', '=', name)
        .execute();
    } else {
      const meta = validateTree(name, next, changed, options);
      const fallback = change.action === 'create' && change.category ? change.category : undefined;
      if (fallback !== undefined && skillNameError(fallback) !== undefined) refuse(`the category '${fallback}' must be lowercase letters, digits, '.', '_' or '-'`);
      const values = {
        version,
        description: meta.description,
        // A category given to create (not in the frontmatter) stays with the skill through later edits.
        category: meta.category ?? fallback ?? (live ? row.category : null),
        tags: meta.tags,
        deleted_at: null,
        updated_at: sql<Date>`clock_timestamp()`,
      };
      await trx
        .insertInto('skills')
        .values({ profile_id: profileId, name, created_by: options.origin, ...values })
        .onConflict((oc) =>
          oc.columns(['profile_id', 'name']).doUpdateSet(
            live ? values : { ...values, created_by: options.origin, pinned: false, created_at: sql`clock_timestamp()` },
          ),
        )
        .execute();
      for (const path of changed) {
        const content = next.get(path)!;
        await trx.insertInto('skill_blobs').values({ sha256: sha256(content), content }).onConflict((oc) => oc.column('sha256').doNothing()).execute();
      }
    }
    const manifest = Object.fromEntries([...next].map(([path, content]) => [path, sha256(content)]));
    await trx
      .insertInto('skill_versions')
      .values({
        profile_id: profileId,
        name,
        version,
        files: JSON.stringify(manifest),
        action: change.action,
        author: options.author,
        note: change.action === 'delete' && change.absorbed_into ? `absorbed into ${change.absorbed_into}` : null,
      })
      .execute();
    return { ok: true, name, version, message };
  } catch (error) {
    if (error instanceof Refusal) {
      return { ok: false, error: /nothing was changed/i.test(error.message) ? error.message : `${error.message}. Nothing was changed.` };
    }
    throw error;
  }
}

export interface SkillBundle {
  /** Relative path -> content; must include SKILL.md, whose frontmatter names the skill. */
  files: Record<string, Buffer>;
}

export type SkillImportResult =
  | { ok: true; skills: { name: string; version: number; message: string }[] }
  | { ok: false; error: string; index: number };

class ImportFailed extends Error {
  readonly index: number;
  constructor(message: string, index: number) {
    super(message);
    this.index = index;
  }
}

/**
 * Imports several skills all or nothing (a person's directory tree or API upload): each bundle is
 * validated and scanned like any write; the first one that fails rolls the whole import back.
 */
export async function importSkills(
  db: Kysely<Database>,
  profileId: string,
  bundles: SkillBundle[],
  options: Omit<SkillWriteOptions, 'viewed' | 'origin'>,
): Promise<SkillImportResult> {
  try {
    const skills = await db.transaction().execute(async (trx) => {
      const done: { name: string; version: number; message: string }[] = [];
      for (const [index, bundle] of bundles.entries()) {
        const skillMd = bundle.files[SKILL_MD];
        const text = skillMd === undefined ? undefined : skillText(skillMd);
        if (text === undefined) throw new ImportFailed('SKILL.md is missing or not UTF-8 text', index);
        const parsed = parseSkillMd(text);
        if (!parsed.ok) throw new ImportFailed(parsed.error, index);
        const result = await applySkillChange(
          trx,
          profileId,
          { action: 'import', name: parsed.meta.name, files: bundle.files },
          { ...options, origin: 'import' },
        );
        if (!result.ok) throw new ImportFailed(`${parsed.meta.name}: ${result.error}`, index);
        done.push({ name: result.name, version: result.version, message: result.message });
      }
      return done;
    });
    return { ok: true, skills };
  } catch (error) {
    if (error instanceof ImportFailed) return { ok: false, error: error.message, index: error.index };
    throw error;
  }
}
