import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';
import { applySkillChange } from './skill-change.ts';
import { parseFrontmatter, parseSkillMd, SKILL_MD } from './skill-format.ts';
import { scanForInjection } from './injection-scan.ts';
import { sha256, skillText } from './skill-store.ts';

/**
 * Herald's own skills ship in the repository's skills/ folder (and in the image beside
 * migrations/); from a package's src/ or dist/ and from the bundle alike it is three levels up.
 */
export const BUILTIN_SKILLS_DIR = fileURLToPath(new URL('../../../skills/', import.meta.url));

export interface BuiltinSkill {
  name: string;
  /** `metadata.version` of its SKILL.md: raised whenever Herald changes the skill. */
  version: number;
  files: Record<string, Buffer>;
}

/** What seeding did to one profile's copy of one skill. */
export type SeedOutcome = 'added' | 'updated' | 'offered' | 'current' | 'removed' | 'own';

async function filesUnder(dir: string, root: string, files: Record<string, Buffer>): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await filesUnder(path, root, files);
    else if (entry.isFile()) files[relative(root, path).split(sep).join('/')] = await readFile(path);
  }
}

function versionOf(name: string, skillMd: Buffer): number {
  const { data } = parseFrontmatter(skillText(skillMd) ?? '');
  const metadata = data.metadata;
  const raw = typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) ? (metadata as Record<string, unknown>).version : undefined;
  const version = Number(raw);
  if (!Number.isInteger(version) || version < 1) throw new Error(`built-in skill ${name}: metadata.version must be a whole number from 1`);
  return version;
}

/** Reads and validates the shipped skills; a broken one is a build error, so this throws. */
export async function loadBuiltinSkills(dir: string = BUILTIN_SKILLS_DIR): Promise<BuiltinSkill[]> {
  const skills: BuiltinSkill[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const files: Record<string, Buffer> = {};
    await filesUnder(join(dir, entry.name), join(dir, entry.name), files);
    const skillMd = files[SKILL_MD];
    if (skillMd === undefined) continue;
    const parsed = parseSkillMd(skillText(skillMd) ?? '');
    if (!parsed.ok) throw new Error(`built-in skill ${entry.name}: ${parsed.error}`);
    if (parsed.meta.name !== entry.name) throw new Error(`built-in skill ${entry.name}: its frontmatter names '${parsed.meta.name}'`);
    skills.push({ name: entry.name, version: versionOf(entry.name, skillMd), files });
  }
  return skills;
}

let shipped: Promise<BuiltinSkill[]> | undefined;

/** The shipped skills, read once per process: they change only with Herald itself (a failed read is tried again). */
export function shippedBuiltinSkills(): Promise<BuiltinSkill[]> {
  shipped ??= loadBuiltinSkills().catch((error: unknown) => {
    shipped = undefined;
    throw error;
  });
  return shipped;
}

const author = (skill: BuiltinSkill) => `herald:builtin-v${skill.version}`;

async function writeCopy(trx: Transaction<Database>, profileId: string, skill: BuiltinSkill): Promise<void> {
  const result = await applySkillChange(trx, profileId, { action: 'import', name: skill.name, files: skill.files }, { origin: 'builtin', author: author(skill), scan: scanForInjection });
  if (!result.ok) throw new Error(`built-in skill ${skill.name}: ${result.error}`);
  await trx
    .updateTable('skills')
    .set({ builtin_version: skill.version, builtin_seeded_version: result.version, offered_builtin_version: null, offered_builtin_files: null })
    .where('profile_id', '=', profileId)
    .where('name', '=', skill.name)
    .execute();
}

/** Keeps the newer files beside an edited copy: blobs stored, the manifest on the row. */
async function offer(trx: Transaction<Database>, profileId: string, skill: BuiltinSkill): Promise<void> {
  const manifest: Record<string, string> = {};
  for (const [path, content] of Object.entries(skill.files)) {
    manifest[path] = sha256(content);
    await trx
      .insertInto('skill_blobs')
      .values({ sha256: manifest[path], content })
      .onConflict((oc) => oc.column('sha256').doNothing())
      .execute();
  }
  await trx
    .updateTable('skills')
    .set({ offered_builtin_version: skill.version, offered_builtin_files: JSON.stringify(manifest) })
    .where('profile_id', '=', profileId)
    .where('name', '=', skill.name)
    .execute();
}

async function seedOne(trx: Transaction<Database>, profileId: string, skill: BuiltinSkill): Promise<SeedOutcome> {
  // The same lock applySkillChange takes (re-entrant in one transaction): no writer slips between.
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`skill:${profileId}:${skill.name}`}))`.execute(trx);
  const row = await trx
    .selectFrom('skills')
    .select(['version', 'deleted_at', 'builtin_version', 'builtin_seeded_version', 'offered_builtin_version'])
    .where('profile_id', '=', profileId)
    .where('name', '=', skill.name)
    .executeTakeFirst();
  if (row === undefined) {
    await writeCopy(trx, profileId, skill);
    return 'added';
  }
  if (row.builtin_version === null) return 'own';
  if (row.deleted_at !== null) return 'removed';
  if (row.builtin_version >= skill.version) return 'current';
  if (row.version === row.builtin_seeded_version) {
    await writeCopy(trx, profileId, skill);
    return 'updated';
  }
  if (row.offered_builtin_version !== skill.version) await offer(trx, profileId, skill);
  return 'offered';
}

/**
 * Seeds Herald's skills into profiles (all of them by default): a missing one is added, an
 * untouched copy of an older version is updated, an edited copy is kept and the newer version is
 * offered beside it, a removed copy stays removed, and a profile's own skill of the same name is
 * left alone. Idempotent; one transaction per profile and skill.
 */
export async function seedBuiltinSkills(db: Kysely<Database>, skills: readonly BuiltinSkill[], profileIds?: readonly string[]): Promise<Record<SeedOutcome, number>> {
  const counts: Record<SeedOutcome, number> = { added: 0, updated: 0, offered: 0, current: 0, removed: 0, own: 0 };
  const profiles = profileIds ?? (await db.selectFrom('profiles').select('id').orderBy('id').execute()).map((p) => p.id);
  for (const profileId of profiles) {
    for (const skill of skills) counts[await db.transaction().execute((trx) => seedOne(trx, profileId, skill))]++;
  }
  return counts;
}

/**
 * Seeds Herald's skills into one profile inside `trx`: createProfile's transaction, so a profile
 * made while Herald runs has them at once rather than at the next migrate. A copy's rows (copied
 * with their builtin columns) are left as they are, as seeding always leaves them.
 */
export async function seedProfileBuiltinSkills(trx: Transaction<Database>, profileId: string, skills?: readonly BuiltinSkill[]): Promise<void> {
  for (const skill of skills ?? (await shippedBuiltinSkills())) await seedOne(trx, profileId, skill);
}
