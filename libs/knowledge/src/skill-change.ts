import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import type { Database } from '@herald/db';
import { categoryError, parseSkillMd, SKILL_FILE_MAX_BYTES, SKILL_MD, SKILL_MD_MAX_CHARS, skillNameError, supportPathError } from './skill-format.ts';
import { readSkillFiles, sha256, skillText, viewedKey } from './skill-store.ts';
import type { SkillOrigin } from './skill-store.ts';
import type { ScanPlace } from './injection-scan.ts';

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
  | { action: 'import'; name: string; files: Record<string, Buffer>; category?: string | undefined };

export interface SkillWriteOptions {
  origin: SkillOrigin;
  /** 'session:<id>', 'review:<id>', 'api', 'cli': kept on the version. */
  author: string;
  /**
   * Injection scanner: why a text looks like prompt injection where it goes, or undefined. The
   * description is scanned for the standing prompt, every file as a skill file (scanInPlace).
   */
  scan(text: string, place: ScanPlace): string | undefined;
  /** Review only: the files viewed in this review, as `name/path`; existing files must be viewed first. */
  viewed?: ReadonlySet<string>;
  /**
   * The person whose session or chat this change comes from (origin 'session' or 'review'): the
   * skill becomes theirs and unshared (unless the profile auto-shares), and they may change only
   * skills they can see. Operators' writes (API, CLI, import) leave it unset and share the skill.
   */
  person?: string | undefined;
}

export type SkillWriteResult = { ok: true; name: string; version: number; message: string } | { ok: false; error: string };

/** The skill's row before the change; undefined when it never existed. */
interface SkillRow {
  version: number;
  pinned: boolean;
  deleted_at: Date | null;
  category: string | null;
  shared: boolean;
  owner_id: string | null;
}

/** A person's change (a session, or a review of their chat) as opposed to an operator's. */
const fromPerson = (options: SkillWriteOptions) => options.origin === 'session' || options.origin === 'review';

/** The new state of the files: what every path holds after the change, and which paths it wrote. */
interface PlannedChange {
  next: Map<string, Buffer>;
  changed: Set<string>;
  message: string;
}

class Refusal extends Error {}

// A refusal unwinds from any depth of the checks to applySkillChange, which answers it.
const refuse = (message: string): never => {
  throw new Refusal(message);
};

function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** Checks every file of the new state; returns the parsed SKILL.md metadata. */
function validateTree(name: string, files: Map<string, Buffer>, changed: ReadonlySet<string>, options: SkillWriteOptions) {
  const skillMd = files.get(SKILL_MD);
  if (skillMd === undefined) refuse('the skill has no SKILL.md');
  const text = skillText(skillMd!) ?? refuse('SKILL.md is not valid UTF-8 text');
  if (text.length > SKILL_MD_MAX_CHARS) refuse(`SKILL.md is ${text.length} characters; the limit is ${SKILL_MD_MAX_CHARS}`);
  const parsed = parseSkillMd(text);
  if (!parsed.ok) return refuse(parsed.error);
  if (parsed.meta.name !== name) refuse(`the frontmatter name '${parsed.meta.name}' differs from the skill name '${name}'`);
  // The description sits in every system prompt's skill list: it is scanned as prompt text.
  const promptReason = changed.has(SKILL_MD) ? options.scan(parsed.meta.description, 'prompt') : undefined;
  if (promptReason !== undefined) refuse(`the description was refused by the security scan (${promptReason}); nothing was changed. Rewrite it without that content.`);
  for (const [path, content] of files) {
    const pathError = supportPathError(path);
    if (pathError) refuse(pathError);
    if (content.length > SKILL_FILE_MAX_BYTES) refuse(`${path} is ${content.length} bytes; the limit is ${SKILL_FILE_MAX_BYTES} (1 MiB)`);
    if (!changed.has(path)) continue;
    const fileText = skillText(content);
    if (fileText === undefined) continue;
    const reason = options.scan(fileText, 'skill-file');
    if (reason !== undefined) {
      refuse(`${path} was refused by the security scan (${reason}); nothing was changed. Rewrite it without that content.`);
    }
  }
  return parsed.meta;
}

/** Whether this writer may make this change to the skill as it stands. */
function checkAllowed(change: SkillChange, row: SkillRow | undefined, options: SkillWriteOptions): void {
  const name = change.name;
  const live = row !== undefined && row.deleted_at === null;
  // Someone else's unshared skill does not exist for this person: not to read, not to change.
  if (live && fromPerson(options) && !row.shared && row.owner_id !== (options.person ?? null) && change.action !== 'create') {
    refuse(`no skill named '${name}'; skills_list shows the existing ones`);
  }
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
}

function patchFile(change: Extract<SkillChange, { action: 'patch' }>, current: ReadonlyMap<string, Buffer>, mustHaveViewed: (path: string) => void): PlannedChange {
  const { name } = change;
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
  const next = new Map(current).set(path, Buffer.from(text.split(change.old_string).join(change.new_string), 'utf8'));
  const replaced = change.replace_all === true ? count : 1;
  return { next, changed: new Set([path]), message: `patched ${path} of '${name}' (${replaced} replacement${replaced > 1 ? 's' : ''})` };
}

/** The files after the change, from the files before it; refuses what the action may not do. */
function planChange(change: SkillChange, current: ReadonlyMap<string, Buffer>, live: boolean, options: SkillWriteOptions): PlannedChange {
  const { name } = change;
  // A review rewrites only what it has read in this review: it must not clobber a person's edit unseen.
  const mustHaveViewed = (path: string) => {
    if (options.origin !== 'review' || !current.has(path)) return;
    if (!options.viewed?.has(viewedKey(name, path))) {
      refuse(`view it first: call skill_view(name='${name}'${path === SKILL_MD ? '' : `, file_path='${path}'`}) before changing it`);
    }
  };
  const next = new Map(current);
  switch (change.action) {
    case 'create':
    case 'edit':
      mustHaveViewed(SKILL_MD);
      next.set(SKILL_MD, Buffer.from(change.content, 'utf8'));
      return { next, changed: new Set([SKILL_MD]), message: change.action === 'create' ? `created skill '${name}'` : `rewrote SKILL.md of '${name}'` };
    case 'patch':
      return patchFile(change, current, mustHaveViewed);
    case 'write_file':
      if (change.file_path === SKILL_MD) refuse("use action 'edit' or 'patch' for SKILL.md");
      mustHaveViewed(current.has(change.file_path) ? change.file_path : SKILL_MD);
      next.set(change.file_path, Buffer.from(change.file_content, 'utf8'));
      return { next, changed: new Set([change.file_path]), message: `wrote ${change.file_path} in '${name}'` };
    case 'remove_file':
      if (change.file_path === SKILL_MD) refuse("SKILL.md cannot be removed; use action 'delete' for the whole skill");
      if (!current.has(change.file_path)) refuse(`the skill '${name}' has no file '${change.file_path}'`);
      mustHaveViewed(change.file_path);
      next.delete(change.file_path);
      return { next, changed: new Set(), message: `removed ${change.file_path} from '${name}'` };
    case 'delete':
      mustHaveViewed(SKILL_MD);
      return { next: new Map(), changed: new Set(), message: `deleted skill '${name}'${change.absorbed_into ? ` (absorbed into '${change.absorbed_into}')` : ''}` };
    case 'import': {
      const files = new Map(Object.entries(change.files));
      return { next: files, changed: new Set(files.keys()), message: live ? `replaced the files of '${name}'` : `imported skill '${name}'` };
    }
  }
}

/** Validates the new files and stores the skill's row and the blobs the change wrote. */
async function storeSkill(
  trx: Transaction<Database>,
  profileId: string,
  change: SkillChange,
  state: { row: SkillRow | undefined; version: number; plan: PlannedChange; autoShare: boolean },
  options: SkillWriteOptions,
): Promise<void> {
  const { row, version, plan } = state;
  const live = row !== undefined && row.deleted_at === null;
  const meta = validateTree(change.name, plan.next, plan.changed, options);
  // A category given to create or import (the folder a skill sits in), when the frontmatter names none.
  const fallback = (change.action === 'create' || change.action === 'import') && change.category ? change.category : undefined;
  if (fallback !== undefined && categoryError(fallback) !== undefined) refuse(categoryError(fallback)!);
  const values = {
    version,
    description: meta.description,
    // A category given to create (not in the frontmatter) stays with the skill through later edits.
    category: meta.category ?? fallback ?? (live ? row.category : null),
    tags: meta.tags,
    deleted_at: null,
    updated_at: sql<Date>`clock_timestamp()`,
    // A person's words reach others only once an operator shares them (or the profile auto-shares).
    ...(fromPerson(options) ? { owner_id: options.person ?? null, shared: state.autoShare } : { owner_id: null, shared: true }),
  };
  await trx
    .insertInto('skills')
    .values({ profile_id: profileId, name: change.name, created_by: options.origin, ...values })
    .onConflict((oc) => oc.columns(['profile_id', 'name']).doUpdateSet(live ? values : { ...values, created_by: options.origin, pinned: false, created_at: sql`clock_timestamp()` }))
    .execute();
  for (const path of plan.changed) {
    const content = plan.next.get(path)!;
    await trx
      .insertInto('skill_blobs')
      .values({ sha256: sha256(content), content })
      .onConflict((oc) => oc.column('sha256').doNothing())
      .execute();
  }
}

async function markDeleted(trx: Transaction<Database>, profileId: string, name: string, version: number): Promise<void> {
  await trx
    .updateTable('skills')
    .set({ version, deleted_at: sql`clock_timestamp()`, updated_at: sql`clock_timestamp()` })
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .execute();
}

/** Every version is kept: its manifest maps each path to the blob holding it. */
async function recordVersion(trx: Transaction<Database>, profileId: string, change: SkillChange, version: number, files: Map<string, Buffer>, author: string) {
  const manifest = Object.fromEntries([...files].map(([path, content]) => [path, sha256(content)]));
  await trx
    .insertInto('skill_versions')
    .values({
      profile_id: profileId,
      name: change.name,
      version,
      files: JSON.stringify(manifest),
      action: change.action,
      author,
      note: change.action === 'delete' && change.absorbed_into ? `absorbed into ${change.absorbed_into}` : null,
    })
    .execute();
}

/**
 * Applies one change to a profile's skill all or nothing: the new state of every file is validated
 * (frontmatter, limits, paths) and scanned for injection before anything is written, and the write
 * is a new version (every version is kept). An advisory lock per skill serialises writers, so two
 * sessions patching the same skill never lose an edit. The caller runs this inside its (fenced)
 * transaction, which rolls back if anything after the checks fails.
 */
export async function applySkillChange(trx: Transaction<Database>, profileId: string, change: SkillChange, options: SkillWriteOptions): Promise<SkillWriteResult> {
  const nameError = skillNameError(change.name);
  if (nameError) return { ok: false, error: nameError };
  const name = change.name;
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`skill:${profileId}:${name}`}))`.execute(trx);
  const row = await trx
    .selectFrom('skills')
    .select(['version', 'pinned', 'deleted_at', 'category', 'shared', 'owner_id'])
    .where('profile_id', '=', profileId)
    .where('name', '=', name)
    .executeTakeFirst();
  const profile = await trx.selectFrom('profiles').select('auto_share_skills').where('id', '=', profileId).executeTakeFirst();
  const live = row !== undefined && row.deleted_at === null;
  try {
    checkAllowed(change, row, options);
    const current = live ? ((await readSkillFiles(trx, profileId, name)) ?? new Map<string, Buffer>()) : new Map<string, Buffer>();
    const plan = planChange(change, current, live, options);
    const version = (row?.version ?? 0) + 1;
    if (change.action === 'delete') await markDeleted(trx, profileId, name, version);
    else await storeSkill(trx, profileId, change, { row, version, plan, autoShare: profile?.auto_share_skills === true }, options);
    await recordVersion(trx, profileId, change, version, plan.next, options.author);
    return { ok: true, name, version, message: plan.message };
  } catch (error) {
    if (error instanceof Refusal) {
      return { ok: false, error: /nothing was changed/i.test(error.message) ? error.message : `${error.message}. Nothing was changed.` };
    }
    throw error;
  }
}
